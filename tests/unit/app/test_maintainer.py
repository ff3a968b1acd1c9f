"""PoolMaintainer: the first publish happens in the background and is retried until the API
server answers; a bug in one publish does not end the worker."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import NodeName
from npu_dra.domain.pool import ResourceSlice
from tests.support.controlplane import wait_for


class FlakyPublisher:
    """Fails (as the API would, then as a bug would) until `failures` runs out."""

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.tries = 0
        self.published = threading.Event()

    def publish(self, *, refresh: bool = True) -> tuple[ResourceSlice, ...]:
        self.tries += 1
        if self.failures:
            raise self.failures.pop(0)
        self.published.set()
        return ()

    def sharing_changed(self) -> bool:  # no chip is shared here
        return False


def maintainer(publisher: FlakyPublisher) -> PoolMaintainer:
    inventory = InventoryCache(FakeHardware({"chip": "910B4", "count": 2}, node=NodeName("n")))
    return PoolMaintainer(
        inventory=inventory,
        publisher=publisher,  # type: ignore[arg-type]
        interval_s=3600.0,
        retry_s=0.01,
    )


def test_the_first_publish_is_retried_until_the_api_answers() -> None:
    down = [ClusterUnavailable("connection refused")] * 3 + [KeyError("a bug")]
    publisher = FlakyPublisher(list(down))
    worker = maintainer(publisher)
    worker.start()
    try:
        assert worker.wait_published(timeout=10)
    finally:
        worker.stop()
    assert publisher.tries == len(down) + 1


def test_nothing_counts_as_published_while_the_api_is_down() -> None:
    publisher = FlakyPublisher([ClusterUnavailable("connection refused")] * 1000)
    worker = maintainer(publisher)
    worker.start()
    try:
        published = worker.wait_published(timeout=0.2)
    finally:
        worker.stop()
    assert not published
    assert publisher.tries > 1


class Nodes:
    """The API server's Nodes as the maintainer asks for them; `known` may change meanwhile."""

    def __init__(self, known: bool) -> None:
        self.known = known
        self.asked = 0

    def node_exists(self, *, node: NodeName) -> bool:
        self.asked += 1
        return self.known


def test_a_node_name_the_api_server_does_not_know_keeps_the_plugin_not_ready(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    nodes = Nodes(known=False)
    worker = PoolMaintainer(
        inventory=InventoryCache(FakeHardware({"chip": "910B4", "count": 2}, node=NodeName("n"))),
        publisher=FlakyPublisher([]),  # type: ignore[arg-type]
        interval_s=0.02,
        retry_s=0.01,
        node=NodeName("nodee-1"),
        nodes=nodes,
    )
    worker.start()
    try:
        assert worker.wait_published(timeout=10)
        wait_for(lambda: nodes.asked >= 3, timeout=10, what="the Node looked up again")
        problem = worker.readiness_problem()
        assert problem is not None
        assert "nodee-1" in problem
        assert "--node-name" in problem
        nodes.known = True  # the kubelet registers it (or the name was fixed)
        wait_for(lambda: worker.readiness_problem() is None, timeout=10, what="ready")
    finally:
        worker.stop()
    said = [r for r in caplog.records if "nodee-1" in r.getMessage()]
    assert len(said) == 2, [r.getMessage() for r in said]  # missing once, found once
    assert said[0].levelname == "ERROR"


def test_a_known_node_is_looked_up_once() -> None:
    nodes = Nodes(known=True)
    worker = PoolMaintainer(
        inventory=InventoryCache(FakeHardware({"chip": "910B4", "count": 2}, node=NodeName("n"))),
        publisher=FlakyPublisher([]),  # type: ignore[arg-type]
        interval_s=0.02,
        retry_s=0.01,
        node=NodeName("node-1"),
        nodes=nodes,
    )
    worker.start()
    try:
        assert worker.wait_published(timeout=10)
        wait_for(lambda: worker.readiness_problem() is None, timeout=10, what="ready")
        time.sleep(0.2)  # ten intervals
    finally:
        worker.stop()
    assert nodes.asked == 1
