"""Events from a running plugin: a Warning on the claim whose prepare failed for a reason its
owner can fix, and one on the Node when an NPU's health changes (and one when it recovers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from plugin_node import NODE, Node, plugin_settings, start_node

from npu_dra.domain.device import Health
from tests.support.controlplane import wait_for


@pytest.fixture
def probing(scratch: Path) -> Iterator[Node]:
    started = start_node(plugin_settings(scratch, health_interval=0.05))
    # The first probe is the starting state, not a change: flips come after it.
    assert started.container.node.maintainer().wait_published(10)
    yield started
    started.plugin.stop()


def events(node: Node, reason: str) -> list[dict[str, Any]]:
    return [e for e in node.cluster.list("Event") if e["reason"] == reason]


def test_a_prepare_on_a_critical_npu_puts_a_warning_on_the_claim(probing: Node) -> None:
    ref = probing.claim("on-broken", ["npu-7"])  # npu-7 is Critical on this node
    with probing.kubelet.register() as dra:
        assert "device is Critical" in dra.prepare([ref]).claims[ref.uid].error

    [event] = wait_for(lambda: events(probing, "PrepareFailed"), timeout=10, what="the event")
    assert event["regarding"]["kind"] == "ResourceClaim"
    assert (event["regarding"]["name"], event["regarding"]["uid"]) == (ref.name, ref.uid)
    assert event["metadata"]["namespace"] == ref.namespace
    assert event["type"] == "Warning"


def test_an_npu_going_bad_and_recovering_puts_two_events_on_the_node(probing: Node) -> None:
    probing.hardware.set_health(3, Health.UNHEALTHY)
    [bad] = wait_for(lambda: events(probing, "DeviceUnhealthy"), timeout=10, what="unhealthy")
    probing.hardware.set_health(3, Health.HEALTHY)
    [good] = wait_for(lambda: events(probing, "DeviceHealthy"), timeout=10, what="recovered")

    for event in (bad, good):
        assert event["regarding"] == {"apiVersion": "v1", "kind": "Node", "name": NODE}
    assert "npu-3" in bad["note"]
    assert bad["note"].endswith("Healthy -> Unhealthy")
    assert (bad["type"], good["type"]) == ("Warning", "Normal")
