"""PoolMaintainer: the first publish happens in the background and is retried until the API
server answers; a bug in one publish does not end the worker."""

from __future__ import annotations

import threading

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import NodeName
from npu_dra.domain.pool import ResourceSlice


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
