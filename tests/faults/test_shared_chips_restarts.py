"""Shared chips in the real plugin process (#44), with and without per-pod sockets (the chart's
default, `--seamless-upgrade on` with `--pod-uid`, whose calls run one at a time on the node):
sharing x restart with `--chip-shares` changed, sharing x gate change (an upgrade that turns
DRAConsumableCapacity on), and a hanging sharing-mode question.

The plugin runs on the fault suite's fake 910B4 host against the real v1.34.3 API server (no
DRAConsumableCapacity: shared chips are fixed shares), its claims allocated as the scheduler
would (tests/faults/harness.py). The upgrade moves the same host, its checkpoint and CDI specs
kept, to the gated v1.34.3 plane (DRAConsumableCapacity on, as on by default from 1.36: KEP-5075)
while its shares are held. The same findings in-process: test_shared_chips_together.py,
test_device_share_query_hangs.py.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.e2e.plugin_process import DRIVER
from tests.e2e.seed_cluster import access_applied
from tests.faults.harness import (
    ONE_INSTANCE,
    PER_POD,
    FaultNode,
    PluginRun,
    create_claims,
    fault_node,
    node_on,
)
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


@pytest.fixture
def upgraded(control_plane_gated: ControlPlane) -> Iterator[ControlPlane]:
    """The API server after the upgrade: DRAConsumableCapacity on, the plugin's access applied."""
    with access_applied(control_plane_gated):
        yield control_plane_gated


def share_claim(node: FaultNode, name: str, memory: str) -> WireClaim:
    """A claim allocated a share of npu-0 (a shareID consuming `memory`), as the scheduler
    allocates a multi-allocatable chip."""
    resource: Any = client.ResourceV1Api(node.plane.api_client)
    request = {"name": "npu", "exactly": {"deviceClassName": DRIVER}}
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": node.namespace},
        "spec": {"devices": {"requests": [request]}},
    }
    made = json.loads(
        resource.create_namespaced_resource_claim(node.namespace, body, _preload_content=False).data
    )
    result = {"request": "npu", "driver": DRIVER, "pool": node.name, "device": "npu-0"}
    result |= {"shareID": str(uuid.uuid4()), "consumedCapacity": {"memCapacity": memory}}
    made["status"] = {"allocation": {"devices": {"results": [result]}}}
    resource.replace_namespaced_resource_claim_status(
        name, node.namespace, made, _preload_content=False
    )
    return WireClaim(node.namespace, name, made["metadata"]["uid"])


def start(node: FaultNode, per_pod: str | None, **flags: str) -> PluginRun:
    """The plugin process with `flags` as its env (SHARED_CHIPS=...), published afresh."""
    node.delete_slices()
    env = {"CLAIM_FETCH_TIMEOUT": str(node.fetch_timeout_s), **flags}
    node.sockets = ONE_INSTANCE if per_pod is None else PER_POD
    node.pod_uid = per_pod or ""
    node.plugin = PluginRun.start(node, env)
    wait_for(node.slices, timeout=60, what="the pool published")
    return node.plugin


def npu_0(node: FaultNode) -> dict[str, Any]:
    """npu-0's published devices, with the share count each says (or, for npu-0 itself,
    whether several claims may hold it)."""
    return {
        d["name"]: d.get("attributes", {}).get("shares", {}).get("int")
        or d.get("allowMultipleAllocations")
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


def test_sharing_x_gate_change_upgrade_keeps_held_fixed_shares_and_refuses_the_other_form(
    node: FaultNode, upgraded: ControlPlane, per_pod: str | None
) -> None:
    """npu-0's four fixed shares are held when the API server starts serving consumable capacity:
    the plugin restarted there still publishes them (not npu-0 multi-allocatable beside them),
    and a share of npu-0 in the new form taking its 32 GiB is refused, naming what is held."""
    start(node, per_pod, SHARED_CHIPS="npu-0", CHIP_SHARES="4")
    quarters = create_claims(node, [[f"npu-0-share-{i}"] for i in range(4)], prefix="quarter")
    assert prepare_each(node, quarters) == {c.name: "" for c in quarters}
    node.plugin.kill()  # type: ignore[union-attr]
    with node_on(upgraded, node.host) as after:
        start(after, per_pod, SHARED_CHIPS="npu-0", CHIP_SHARES="4")
        assert npu_0(after) == {f"npu-0-share-{i}": 4 for i in range(4)}
        whole_memory = share_claim(after, "consumable", "32Gi")
        error = prepare_each(after, [whole_memory])[whole_memory.name]
        assert "chip npu-0 has given out 32768 MiB" in error, error
        assert "4 share(s)" in error, error


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
