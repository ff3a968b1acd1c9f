"""The plugin process against a real API server through a toxic proxy: a paused API server
and the kubelet's timeout, a restart during an outage, latency with connection resets.

Every wait is bounded; every loop of requests has a fixed number of rounds.
"""

from __future__ import annotations

import time

import grpc
import pytest

from tests.faults.harness import (
    FETCH_TIMEOUT_S,
    FaultNode,
    check,
    create_claims,
    fault_node,
)
from tests.support.controlplane import ControlPlane, wait_for
from tests.support.kubelet import WireClaim

KUBELET_TIMEOUT_S = 1.0  # the kubelet gives up on a call this fast here (45 s in a kubelet)
SETTLE_S = FETCH_TIMEOUT_S + 10.0  # the late prepare's own deadline, and then some


def leaked_or_cancelled(node: FaultNode, claims: list[WireClaim]) -> bool:
    """The late prepare has finished one way or the other: it said it was cancelled, or it left
    a spec behind."""
    assert node.plugin is not None
    log = node.host.log.read_text(errors="replace")
    cancelled = sum(f"prepare {c.namespace}/{c.name} ({c.uid}) cancelled" in log for c in claims)
    return cancelled == len(claims) or bool(node.spec_uids() & {c.uid for c in claims})


@pytest.mark.parametrize("count", [1, 40])
def test_a_prepare_the_kubelet_gave_up_on_never_commits_after_its_unprepare(
    access: ControlPlane, count: int
) -> None:
    with fault_node(access, "late-prepare") as node:
        claims = create_claims(node, [[f"npu-{i % 8}"] for i in range(count)])
        node.start()
        with node.kubelet() as kubelet:
            with node.proxy.paused():
                with pytest.raises(grpc.RpcError) as gave_up:
                    kubelet.prepare(claims, timeout=KUBELET_TIMEOUT_S)
                answer = kubelet.unprepare(claims, timeout=10)
            wait_for(
                lambda: leaked_or_cancelled(node, claims),
                timeout=SETTLE_S,
                what="the late prepare to finish",
            )
            after_restart = restart_and_read(node)
            next_pod = create_claims(node, [["npu-0"]], prefix="next-pod")
            fresh = [d.device_name for d in kubelet_prepare(node, next_pod)]

        assert gave_up.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert {uid: a.error for uid, a in answer.claims.items()} == {c.uid: "" for c in claims}
        assert node.spec_uids() == {next_pod[0].uid}
        assert after_restart.whole, after_restart
        assert fresh == ["npu-0"]


def restart_and_read(node: FaultNode) -> object:
    assert node.plugin is not None
    node.plugin.kill()
    node.start()
    with node.kubelet():
        return check(node, set())


def kubelet_prepare(node: FaultNode, claims: list[WireClaim]) -> list[object]:
    with node.kubelet() as kubelet:
        answer = kubelet.prepare(claims, timeout=30)
    (only,) = answer.claims.values()
    assert only.error == "", only.error
    return list(only.devices)


def test_a_plugin_restarted_during_an_outage_serves_at_once_and_republishes(
    access: ControlPlane,
) -> None:
    with fault_node(access, "outage") as node:
        ready, leaving = create_claims(node, [["npu-0"], ["npu-1"]])
        fresh = create_claims(node, [["npu-2"]], prefix="fresh")[0]
        node.start()
        with node.kubelet() as kubelet:
            before = kubelet.prepare([ready, leaving], timeout=30)
        wait_for(lambda: len(node.slices()) == 1, timeout=30, what="the pool published")
        assert node.plugin is not None
        node.plugin.kill()

        with node.proxy.outage():
            node.delete_slices()  # e.g. the kubelet wiped them while the plugin was down
            node.start()
            with node.kubelet() as kubelet:
                again = kubelet.prepare([ready], timeout=10)
                gone = kubelet.unprepare([leaving], timeout=10)
                refused = kubelet.prepare([fresh], timeout=30)
            still_running = node.plugin.running()
            time.sleep(1.0)  # an outage that outlasts a publish try
            published_during_outage = len(node.slices())
        wait_for(lambda: len(node.slices()) == 1, timeout=30, what="the pool republished")
        consistency = check(node, {ready.uid})

    assert again.claims[ready.uid] == before.claims[ready.uid]
    assert gone.claims[leaving.uid].error == ""
    assert "did not answer within" in refused.claims[fresh.uid].error
    assert still_running
    assert published_during_outage == 0
    assert consistency.whole, consistency


def test_latency_and_connection_resets_lose_nothing(access: ControlPlane) -> None:
    with fault_node(access, "flaky") as node:
        claims = create_claims(node, [[f"npu-{i}"] for i in range(8)])
        node.proxy.latency = 0.05
        node.proxy.reset_rate = 0.05
        node.start()
        prepared: dict[str, list[str]] = {}
        with node.kubelet() as kubelet:
            for _ in range(10):  # the kubelet retries what failed, a bounded number of times
                todo = [c for c in claims if c.uid not in prepared]
                if not todo:
                    break
                answer = kubelet.prepare(todo, timeout=30)
                for uid, result in answer.claims.items():
                    if not result.error:
                        prepared[uid] = [d.device_name for d in result.devices]
        consistency = check(node, set(prepared))
        resets = node.proxy.resets

    assert sorted(d for devices in prepared.values() for d in devices) == [
        f"npu-{i}" for i in range(8)
    ]
    assert consistency.whole, consistency
    assert resets > 0
