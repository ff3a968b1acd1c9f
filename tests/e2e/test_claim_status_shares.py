"""Claim device status of shared chips on the v1.36.3 plane, where the API server serves
consumable capacity (DRAConsumableCapacity): `--shared-chips=npu-0` publishes npu-0 once, and two
claims each asking 8Gi of its memory are both allocated it, each with a shareID of its own. After
the prepares each claim's status.devices names npu-0 with its own shareID (the server refuses an
entry whose driver/pool/device/shareID is not one of the claim's results); after the unprepares
they are gone. (Fixed share devices, 1.34's form, are devices of their own: test_claim_status.)
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.plugin_process import DRIVER, PluginProcess, fake_node, spawn_plugin
from tests.e2e.seed_cluster import (
    NAMESPACE,
    SCHEDULE_S,
    Seed,
    access_applied,
    delete_pod,
    pod_bound_kubeconfig,
    prepare,
    read_claim,
    unprepare,
    wait_published,
)
from tests.support.controlplane import wait_for
from tests.support.k8s_fixtures import V136, plane_for
from tests.support.kubelet import DraClient, Kubelet

WRITE_S = 30.0
SHARERS = ("share-a", "share-b")


def shared_claim(name: str) -> str:
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: {name}
  namespace: {NAMESPACE}
spec:
  devices:
    requests:
    - name: npu
      exactly:
        deviceClassName: {DRIVER}
        selectors:
        - cel:
            expression: 'device.attributes["{DRIVER}"].?shared.orValue(false)'
        capacity:
          requests:
            memCapacity: 8Gi
"""


@pytest.fixture(scope="module", params=[pytest.param(V136, marks=pytest.mark.k8s_version(V136))])
def seed(request: pytest.FixtureRequest) -> Iterator[Seed]:
    plane = plane_for(request, request.param)
    with contextlib.ExitStack() as stack:
        stack.enter_context(access_applied(plane))
        node = stack.enter_context(fake_node(f"shares-{uuid.uuid4().hex[:6]}"))
        plane.create_ready_node(node.name)
        stack.callback(plane.kubectl, "delete", "node", node.name, check=False)
        argv = [*node.argv(pod_bound_kubeconfig(plane, node)), "--shared-chips=npu-0"]
        plugin = PluginProcess(node, spawn_plugin(argv, node.log))
        stack.callback(plugin.stop)
        found = Seed(plane, node, node, {node.name: plugin})
        wait_published(found, node.name, SCHEDULE_S)
        yield found


@pytest.fixture(scope="module")
def kubelet(seed: Seed) -> Iterator[dict[str, DraClient]]:
    dra = Kubelet(seed.node_a.registry).register()
    yield {seed.node_a.name: dra}
    dra.close()


def allocated(seed: Seed, name: str) -> dict[str, Any] | None:
    claim = read_claim(seed.plane, name)
    return claim if claim.get("status", {}).get("allocation") else None


def entries(seed: Seed, name: str) -> list[dict[str, Any]]:
    return list(read_claim(seed.plane, name).get("status", {}).get("devices") or [])


def test_each_share_of_a_chip_has_its_claims_entry_naming_its_share_id(
    seed: Seed, kubelet: dict[str, DraClient]
) -> None:
    node = seed.node_a.name
    try:
        for name in SHARERS:
            seed.plane.kubectl("apply", "-f", "-", input=shared_claim(name))
        # The scheduler allocates a claim for a pod that uses it: each claim gets one.
        for name in SHARERS:
            seed.plane.kubectl("apply", "-f", "-", input=_pod(name))
        claims = {
            n: wait_for(lambda n=n: allocated(seed, n), timeout=SCHEDULE_S, what=f"{n} allocated")
            for n in SHARERS
        }
        shares = {}
        for name, claim in claims.items():
            [result] = claim["status"]["allocation"]["devices"]["results"]
            assert result["device"] == "npu-0"
            shares[name] = result["shareID"]
            assert prepare(kubelet, node, claim) == ["npu-0"]
        assert len(set(shares.values())) == 2

        for name in SHARERS:
            [entry] = wait_for(
                lambda n=name: entries(seed, n) or None, timeout=WRITE_S, what=f"{name} status"
            )
            assert (entry["device"], entry.get("shareID")) == ("npu-0", shares[name])
            assert entry["data"]["shareMemoryMiB"] == 8192

        for claim in claims.values():
            unprepare(kubelet, node, claim)
        for name in SHARERS:
            wait_for(lambda n=name: not entries(seed, n), timeout=WRITE_S, what=f"{name} cleared")
    finally:
        for name in SHARERS:
            delete_pod(seed, name)
            seed.plane.kubectl(
                "delete", "resourceclaim", name, "-n", NAMESPACE, "--ignore-not-found",
                check=False,
            )  # fmt: skip


def _pod(claim: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {claim}
  namespace: {NAMESPACE}
spec:
  resourceClaims:
  - name: npu
    resourceClaimName: {claim}
  containers:
  - name: app
    image: docker.io/library/ubuntu:22.04
    command: ["sleep", "3600"]
    resources:
      claims:
      - name: npu
"""
