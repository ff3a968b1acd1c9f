"""The seed's flow end to end on a real Kubernetes control plane, v1.34.3 and v1.37.2 alike.

Two fake 910B4 nodes each run `npu-dra kubelet-plugin` as a process (fake npu-smi replaying the
recorded outputs, a fake /sys putting npu-0 and npu-1 of node A on NUMA node 6 and none of node B
there), with the ServiceAccount, RBAC and ResourceSlice policy of deploy/manifests and a token
bound to a stand-in for the DaemonSet's pod on that node. Then, as the seed describes: the slices
carry the seed's attributes; the seed's DeviceClass, ResourceClaimTemplate + Pod and
`numaNode == 6` ResourceClaim + Pod are applied verbatim; the real scheduler allocates and binds;
the test, acting as the kubelet, finds each plugin through its registration socket and prepares
and unprepares the pods' claims, checking the CDI specs on disk. A claim nothing can satisfy
stays pending with the scheduler's reason, and slices the kubelet deletes come back at once.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.e2e.plugin_process import DRIVER, SEED_NUMA, PluginProcess, fake_node, plugin_process
from tests.e2e.seed_cluster import (
    NAMESPACE,
    SCHEDULE_S,
    Seed,
    access_applied,
    bound_node,
    cdi_device_nodes,
    cdi_spec_files,
    davinci,
    delete_pod,
    node_slices,
    pod_bound_kubeconfig,
    pod_claim_names,
    prepare,
    published_devices,
    read_claim,
    read_node_uid,
    read_pod,
    unprepare,
    wait_published,
)
from tests.e2e.seed_yaml import SEED_TEMPLATE_AND_POD, numa_claim_and_pod
from tests.support.controlplane import wait_for
from tests.support.k8s_fixtures import plane_for, versions_params
from tests.support.kubelet import DraClient, Kubelet

NODE_B_NUMA = (0, 0, 0, 0, 2, 2, 2, 2)  # no NUMA node 6: the seed's NUMA claim fits node A only
REPUBLISH_S = 10.0


@pytest.fixture(scope="module", params=versions_params())
def seed(request: pytest.FixtureRequest) -> Iterator[Seed]:
    control_plane = plane_for(request, request.param)
    suffix = uuid.uuid4().hex[:6]
    with contextlib.ExitStack() as stack:
        stack.enter_context(access_applied(control_plane))
        node_a = stack.enter_context(fake_node(f"seed-a-{suffix}", SEED_NUMA))
        node_b = stack.enter_context(fake_node(f"seed-b-{suffix}", NODE_B_NUMA))
        plugins: dict[str, PluginProcess] = {}
        for node in (node_a, node_b):
            control_plane.create_ready_node(node.name)
            stack.callback(control_plane.kubectl, "delete", "node", node.name, check=False)
            token = pod_bound_kubeconfig(control_plane, node)
            plugins[node.name] = stack.enter_context(plugin_process(node, token))
        found = Seed(control_plane, node_a, node_b, plugins)
        for node in (node_a, node_b):
            wait_published(found, node.name, SCHEDULE_S)
        yield found


@pytest.fixture(scope="module")
def kubelets(seed: Seed) -> Iterator[dict[str, DraClient]]:
    """Per node, the kubelet's connection to the plugin it found through the registration socket."""
    clients = {n.name: Kubelet(n.registry).register() for n in (seed.node_a, seed.node_b)}
    yield clients
    for dra in clients.values():
        dra.close()


# --- the tests -----------------------------------------------------------------------------------


def test_each_node_publishes_its_eight_npus_with_the_seeds_attributes(seed: Seed) -> None:
    for node in (seed.node_a, seed.node_b):
        [found] = node_slices(seed.plane, node.name)
        node_uid = read_node_uid(seed.plane, node.name)
        assert found["metadata"]["generateName"] == f"{node.name}-{DRIVER}-"
        assert found["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "name": node.name,
                "uid": node_uid,
                "controller": True,
            }
        ]
        assert found["spec"]["pool"]["name"] == node.name
        assert found["spec"]["pool"]["resourceSliceCount"] == 1
        devices = {d["name"]: d for d in found["spec"]["devices"]}
        assert sorted(devices) == [f"npu-{n}" for n in range(8)]
        for n, numa in enumerate(node.numa):
            device = devices[f"npu-{n}"]
            attributes = device["attributes"]
            assert attributes["chipName"] == {"string": "910B4"}
            assert attributes["numaNode"] == {"int": numa}
            assert attributes["physicalId"] == {"int": n}
            assert attributes["topologyGroup"] == {"string": "ring-0"}
            assert device["capacity"]["memCapacity"] == {"value": "32Gi"}


def test_the_seeds_numa_claim_gets_node_as_numa_6_npus_prepared_and_unprepared(
    seed: Seed, kubelets: dict[str, DraClient]
) -> None:
    seed.plane.kubectl(
        "apply", "-f", "-", input=numa_claim_and_pod(6, "npu-numa-claim", "npu-numa-pod")
    )
    try:
        node = bound_node(seed, "npu-numa-pod")
        claim = read_claim(seed.plane, "npu-numa-claim")
        results = claim["status"]["allocation"]["devices"]["results"]
        assert node == seed.node_a.name
        assert sorted((r["pool"], r["device"]) for r in results) == [
            (node, "npu-0"),
            (node, "npu-1"),
        ]

        assert prepare(kubelets, node, claim) == ["npu-0", "npu-1"]

        uid = claim["metadata"]["uid"]
        assert {p for p in cdi_device_nodes(seed.node_a, uid) if "davinci" in p} >= davinci([0, 1])
        assert not cdi_device_nodes(seed.node_a, uid) & davinci([2, 3, 4, 5, 6, 7])
        delete_pod(seed, "npu-numa-pod")
        unprepare(kubelets, node, claim)
        assert cdi_spec_files(seed.node_a, uid) == []
    finally:
        delete_pod(seed, "npu-numa-pod")
        seed.plane.kubectl(
            "delete",
            "resourceclaim",
            "npu-numa-claim",
            "-n",
            NAMESPACE,
            "--ignore-not-found",
            check=False,
        )


def test_the_seeds_template_pod_gets_one_npu_prepared_on_its_node_and_unprepared(
    seed: Seed, kubelets: dict[str, DraClient]
) -> None:
    seed.plane.kubectl("apply", "-f", "-", input=SEED_TEMPLATE_AND_POD)
    try:
        node_name = bound_node(seed, "npu-pod")
        [claim_name] = pod_claim_names(seed, "npu-pod")
        claim = read_claim(seed.plane, claim_name)
        [result] = claim["status"]["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"]) == (DRIVER, node_name)
        node = seed.node_a if node_name == seed.node_a.name else seed.node_b
        physical_id = published_devices(seed, node_name)[result["device"]]["attributes"][
            "physicalId"
        ]["int"]

        assert prepare(kubelets, node_name, claim) == [result["device"]]

        uid = claim["metadata"]["uid"]
        chips = {p for p in cdi_device_nodes(node, uid) if p.removeprefix("/dev/davinci").isdigit()}
        assert chips == davinci([physical_id])
        delete_pod(seed, "npu-pod")
        unprepare(kubelets, node_name, claim)
        assert cdi_spec_files(node, uid) == []
    finally:
        delete_pod(seed, "npu-pod")
        seed.plane.kubectl(
            "delete",
            "resourceclaimtemplate",
            "npu-claim-template",
            "-n",
            NAMESPACE,
            "--ignore-not-found",
            check=False,
        )


def test_a_claim_nothing_satisfies_stays_pending_with_the_schedulers_reason(seed: Seed) -> None:
    seed.plane.kubectl(
        "apply", "-f", "-", input=numa_claim_and_pod(99, "npu-numa99-claim", "npu-numa99-pod")
    )
    try:

        def unschedulable() -> dict[str, Any] | None:
            conditions = read_pod(seed.plane, "npu-numa99-pod")["status"].get("conditions") or []
            return next(
                (c for c in conditions if c["type"] == "PodScheduled" and c["status"] == "False"),
                None,
            )

        condition = wait_for(unschedulable, timeout=SCHEDULE_S, what="PodScheduled=False")
        assert condition["reason"] == "Unschedulable"
        assert "cannot allocate all claims" in condition["message"], condition["message"]
        assert read_pod(seed.plane, "npu-numa99-pod")["spec"].get("nodeName") is None
        assert read_claim(seed.plane, "npu-numa99-claim")["status"].get("allocation") is None
    finally:
        delete_pod(seed, "npu-numa99-pod")
        seed.plane.kubectl(
            "delete",
            "resourceclaim",
            "npu-numa99-claim",
            "-n",
            NAMESPACE,
            "--ignore-not-found",
            check=False,
        )


def test_slices_the_kubelet_deletes_are_republished_within_seconds(seed: Seed) -> None:
    """The kubelet deletes a node's slices when it restarts; hardware is re-probed only hourly
    here, so only the plugin's watch can bring them back this fast."""
    node = seed.node_b.name
    before = {s["metadata"]["name"] for s in node_slices(seed.plane, node)}
    client.ResourceV1Api(seed.plane.api_client).delete_collection_resource_slice(
        field_selector=f"spec.nodeName={node},spec.driver={DRIVER}"
    )
    started = time.monotonic()

    wait_published(seed, node, REPUBLISH_S)

    elapsed = time.monotonic() - started
    after = node_slices(seed.plane, node)
    assert {s["metadata"]["name"] for s in after}.isdisjoint(before), "never deleted"
    assert elapsed < REPUBLISH_S
