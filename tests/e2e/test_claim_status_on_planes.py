"""Claim device status (KEP-4817) on a real control plane, v1.34.3 and v1.36.3 alike.

One fake 910B4 node runs `npu-dra kubelet-plugin` with the ServiceAccount and RBAC of
deploy/manifests and a token bound to a stand-in for its DaemonSet pod (on 1.36 the server checks
`associated-node:patch` on resourceclaims/driver with that token's node). The seed's NUMA claim is
allocated by the real scheduler; the test, acting as the kubelet, prepares it: the claim's
status.devices then names each allocated device with a Ready condition and its facts; after the
unprepare the entries are gone.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from tests.e2e.plugin_process import BUS_IDS, DRIVER, SEED_NUMA, fake_node, plugin_process
from tests.e2e.seed_cluster import (
    NAMESPACE,
    SCHEDULE_S,
    Seed,
    access_applied,
    bound_node,
    delete_pod,
    pod_bound_kubeconfig,
    prepare,
    read_claim,
    unprepare,
    wait_published,
)
from tests.e2e.seed_yaml import numa_claim_and_pod
from tests.support.controlplane import wait_for
from tests.support.k8s_fixtures import plane_for, versions_params
from tests.support.kubelet import DraClient, Kubelet

WRITE_S = 30.0
TOKENS: dict[str, Path] = {}  # the plugin's pod-bound kubeconfig, by plane version


@pytest.fixture(scope="module", params=versions_params())
def seed(request: pytest.FixtureRequest) -> Iterator[Seed]:
    plane = plane_for(request, request.param)
    with contextlib.ExitStack() as stack:
        stack.enter_context(access_applied(plane))
        node = stack.enter_context(fake_node(f"status-{uuid.uuid4().hex[:6]}", SEED_NUMA))
        plane.create_ready_node(node.name)
        stack.callback(plane.kubectl, "delete", "node", node.name, check=False)
        token = TOKENS[request.param] = pod_bound_kubeconfig(plane, node)
        found = Seed(
            plane, node, node, {node.name: stack.enter_context(plugin_process(node, token))}
        )
        wait_published(found, node.name, SCHEDULE_S)
        yield found


@pytest.fixture(scope="module")
def kubelet(seed: Seed) -> Iterator[dict[str, DraClient]]:
    dra = Kubelet(seed.node_a.registry).register()
    yield {seed.node_a.name: dra}
    dra.close()


def status_devices(seed: Seed, name: str) -> list[dict[str, Any]]:
    return list(read_claim(seed.plane, name).get("status", {}).get("devices") or [])


def ours(seed: Seed, name: str) -> list[dict[str, Any]]:
    return sorted(
        (d for d in status_devices(seed, name) if d["driver"] == DRIVER), key=lambda d: d["device"]
    )


def test_prepare_writes_each_devices_status_and_unprepare_removes_it(
    seed: Seed, kubelet: dict[str, DraClient]
) -> None:
    seed.plane.kubectl(
        "apply", "-f", "-", input=numa_claim_and_pod(6, "status-claim", "status-pod")
    )
    try:
        node = bound_node(seed, "status-pod")
        claim = read_claim(seed.plane, "status-claim")
        assert prepare(kubelet, node, claim) == ["npu-0", "npu-1"]

        entries = wait_for(
            lambda: two if len(two := ours(seed, "status-claim")) == 2 else None,
            timeout=WRITE_S,
            what="the claim's status.devices",
        )
        for entry, physical_id in zip(entries, (0, 1), strict=True):
            assert (entry["pool"], entry["device"]) == (node, f"npu-{physical_id}")
            [ready] = entry["conditions"]
            assert (ready["type"], ready["status"], ready["reason"]) == (
                "Ready",
                "True",
                "Prepared",
            )
            assert entry["data"]["physicalId"] == physical_id
            assert entry["data"]["pciBusID"] == BUS_IDS[physical_id]
            assert entry["data"]["numaNode"] == 6
            assert entry["data"]["topologyGroup"] == "ring-0"

        delete_pod(seed, "status-pod")
        unprepare(kubelet, node, claim)
        wait_for(lambda: not ours(seed, "status-claim"), timeout=WRITE_S, what="entries removed")
    finally:
        delete_pod(seed, "status-pod")
        seed.plane.kubectl(
            "delete", "resourceclaim", "status-claim", "-n", NAMESPACE, "--ignore-not-found",
            check=False,
        )  # fmt: skip


def test_the_plugins_token_cannot_change_what_the_scheduler_wrote(
    seed: Seed, request: pytest.FixtureRequest
) -> None:
    """deploy/manifests/36-claim-status-policy.yaml (and, from 1.36, the server's own
    resourceclaims/binding check): the status grant is for status.devices only."""
    version = request.node.callspec.params["seed"]
    plane = seed.plane
    plane.kubectl("apply", "-f", "-", input=numa_claim_and_pod(6, "taken-claim", "taken-pod"))
    try:
        bound_node(seed, "taken-pod")
        plugin = client.ResourceV1Api(config.new_client_from_config(str(TOKENS[version])))
        with pytest.raises(client.ApiException) as refused:
            plugin.patch_namespaced_resource_claim_status(
                "taken-claim", NAMESPACE, {"status": {"reservedFor": None}}
            )
        assert refused.value.status in (403, 422), refused.value
        reasons = ("may not change a claim's allocation or reservedFor", "resourceclaims/binding")
        assert any(r in str(refused.value.body) for r in reasons), refused.value.body
        assert read_claim(plane, "taken-claim")["status"]["reservedFor"]
    finally:
        delete_pod(seed, "taken-pod")
        plane.kubectl(
            "delete", "resourceclaim", "taken-claim", "-n", NAMESPACE, "--ignore-not-found",
            check=False,
        )  # fmt: skip
