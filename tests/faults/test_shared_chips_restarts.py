"""Shared chips in the real plugin process (#44), with and without per-pod sockets (the chart's
default, `--seamless-upgrade on` with `--pod-uid`, whose calls run one at a time on the node):
sharing x restart with `--chip-shares` changed, and a hanging sharing-mode question.

The plugin runs on the fault suite's fake 910B4 host against the real v1.34.3 API server (no
DRAConsumableCapacity: shared chips are fixed shares), its claims allocated as the scheduler
would (tests/faults/harness.py). The same findings in-process: test_shared_chips_together.py,
test_device_share_query_hangs.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import yaml

from tests.faults.harness import FaultNode, PluginRun, create_claims, fault_node
from tests.support.controlplane import ControlPlane, wait_for
from tests.support.fake_npu_smi import FakeNpuSmi
from tests.support.kubelet import WireClaim

PROBE_TIMEOUT_S = 5.0  # npu-smi's timeout in these runs (the default is 10 s)


@pytest.fixture(params=[False, True], ids=["one-socket", "per-pod-sockets"])
def per_pod(request: pytest.FixtureRequest) -> str | None:
    """The plugin pod's UID where its sockets are named per pod; kept across a restart, as a
    container restarted in its pod keeps it."""
    return str(uuid.uuid4()) if request.param else None


@pytest.fixture
def node(access: ControlPlane) -> Iterator[FaultNode]:
    with fault_node(access, "shares") as made:
        yield made


def start(node: FaultNode, per_pod: str | None, **flags: str) -> PluginRun:
    """The plugin process with `flags` as its env (SHARED_CHIPS=...), published afresh."""
    node.delete_slices()
    env = {"CLAIM_FETCH_TIMEOUT": str(node.fetch_timeout_s), **flags}
    if per_pod is not None:
        env |= {"SEAMLESS_UPGRADE": "on", "POD_UID": per_pod}
    node.plugin = PluginRun.start(node, env)
    wait_for(node.slices, timeout=60, what="the pool published")
    return node.plugin


def npu_0(node: FaultNode) -> dict[str, Any]:
    """npu-0's published devices, with the share count each says."""
    return {
        d["name"]: d.get("attributes", {}).get("shares", {}).get("int")
        for s in node.slices()
        for d in s["spec"].get("devices", [])
        if d["name"].startswith("npu-0-") or d["name"] == "npu-0"
    }


def prepare_each(node: FaultNode, claims: list[WireClaim]) -> dict[str, str]:
    """One kubelet call per claim, all at once; each claim's error ('' where prepared)."""
    kubelet = node.kubelet()

    def one(claim: WireClaim) -> str:
        return str(kubelet.prepare([claim]).claims[claim.uid].error)

    with ThreadPoolExecutor(len(claims)) as pool:
        return dict(zip((c.name for c in claims), pool.map(one, claims), strict=True))


def test_sharing_x_restart_with_chip_shares_changed_keeps_the_held_count(
    node: FaultNode, per_pod: str | None
) -> None:
    """--chip-shares 4 -> 8 across a restart while npu-0's four shares are held: npu-0 is still
    published in four shares, and an eighth share (as allocated from an eight-share offer) is
    refused naming npu-0 and its held shares, never prepared beside them (150 %)."""
    start(node, per_pod, SHARED_CHIPS="npu-0", CHIP_SHARES="4")
    quarters = create_claims(node, [[f"npu-0-share-{i}"] for i in range(4)], prefix="quarter")
    assert prepare_each(node, quarters) == {c.name: "" for c in quarters}
    node.plugin.kill()  # type: ignore[union-attr]
    start(node, per_pod, SHARED_CHIPS="npu-0", CHIP_SHARES="8")
    assert npu_0(node) == {f"npu-0-share-{i}": 4 for i in range(4)}
    (eighth,) = create_claims(node, [["npu-0-share-4"]], prefix="eighth")
    error = prepare_each(node, [eighth])[eighth.name]
    assert "npu-0 is published in 4 shares" in error, error
    assert "4 share(s) of that count are held" in error, error


def test_a_hanging_sharing_mode_question_is_asked_once_and_no_call_waits_past_it(
    node: FaultNode, per_pod: str | None
) -> None:
    """npu-smi's `info -t device-share` hangs: six pods sharing npu-0 and one taking npu-3 whole
    prepare at once. npu-smi is asked once about npu-0, each share gets the reason it gave, and
    the whole chip is prepared (with per-pod sockets too, where the calls run one at a time)."""
    smi_dir = node.host.npu_smi.parent
    smi = FakeNpuSmi(smi_dir, yaml.safe_load((smi_dir / "manifest.yaml").read_text()))
    smi.set_fault(["info", "-t", "device-share"], delay=3600)
    start(node, per_pod, SHARED_CHIPS="npu-0", CHIP_SHARES="8", PROBE_TIMEOUT=f"{PROBE_TIMEOUT_S}")
    shares = create_claims(node, [[f"npu-0-share-{i}"] for i in range(6)], prefix="share")
    (whole,) = create_claims(node, [["npu-3"]], prefix="whole")
    errors = prepare_each(node, [*shares, whole])
    asked = [c for c in smi.calls() if "device-share" in c]
    assert len(asked) == 1, asked
    assert errors.pop(whole.name) == ""
    assert all("npu-0" in e and "no answer within" in e for e in errors.values()), errors
