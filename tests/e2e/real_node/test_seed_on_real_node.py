"""The seed's acceptance step on a real node: its DeviceClass, ResourceClaimTemplate pod and
`numaNode == 6` claim pod, exactly as the seed writes them, start through the real kubelet,
containerd and runc; inside each container exactly the allocated /dev/davinci<N> exist (with the
host's major/minor), the shared nodes exist, ASCEND_VISIBLE_DEVICES lists the allocated ids, and
`npu-smi info` runs. Deleting a pod makes the kubelet unprepare its claim."""

from __future__ import annotations

import re

import pytest

from tests.e2e.real_node.cluster import RealCluster, running_dra_plugin
from tests.e2e.seed_yaml import SEED_TEMPLATE_AND_POD, numa_claim_and_pod
from tests.support.ascend_host import LOCAL_MAJOR, SHARED_MINORS
from tests.support.controlplane import wait_for

DEVICE_LINE = re.compile(r"^c\S+\s+\d+\s+\d+\s+\d+\s+(\d+),\s*(\d+)\s+.*\s(\S+)$")


def char_devices(listing: str) -> dict[str, tuple[int, int]]:
    """`ls -ln /dev` inside a container -> character device name -> (major, minor)."""
    found = {}
    for line in listing.splitlines():
        match = DEVICE_LINE.match(line.strip())
        if match:
            found[match.group(3)] = (int(match.group(1)), int(match.group(2)))
    return found


def physical_ids(devices: list[str]) -> list[int]:
    return sorted(int(name.removeprefix("npu-")) for name in devices)


def assert_container_sees_exactly(cluster: RealCluster, pod: str, ids: list[int]) -> None:
    nodes = char_devices(cluster.in_container(pod, "ls", "-ln", "/dev"))
    davinci = {name: number for name, number in nodes.items() if re.fullmatch(r"davinci\d+", name)}
    assert davinci == {f"davinci{n}": (LOCAL_MAJOR, n) for n in ids}, nodes
    for shared, minor in SHARED_MINORS.items():
        assert nodes.get(shared) == (LOCAL_MAJOR, minor), (shared, nodes)
    env = dict(
        line.split("=", 1) for line in cluster.in_container(pod, "env").splitlines() if "=" in line
    )
    assert env.get("ASCEND_VISIBLE_DEVICES") == ",".join(str(n) for n in ids), env
    smi = cluster.in_container(pod, "npu-smi", "info")
    assert "910B4" in smi, smi
    assert "npu-smi" in smi, smi


@pytest.mark.timeout(600)
def test_seed_pods_start_with_exactly_their_npus_and_unprepare_on_delete(
    real_cluster: RealCluster,
) -> None:
    cluster = real_cluster
    with running_dra_plugin(cluster) as plugin:
        cluster.wait_registered(plugin)
        wait_for(lambda: len(cluster.published()) == 8, timeout=60, what="8 NPUs published")
        # One node: the NUMA pod first, or the template pod may take an NPU of NUMA node 6 and
        # leave `allocationMode: All` of that node unsatisfiable (the seed has several nodes).
        cluster.apply(numa_claim_and_pod(6, "npu-numa-claim", "npu-numa-pod"))
        cluster.wait_running("npu-numa-pod")
        cluster.apply(SEED_TEMPLATE_AND_POD)
        seen: dict[str, list[int]] = {}
        for pod in ("npu-numa-pod", "npu-pod"):
            cluster.wait_running(pod)
            [uid] = cluster.claim_uids(pod)
            seen[pod] = ids = physical_ids(cluster.allocated_devices(uid))
            assert uid in cluster.cdi_spec_uids()
            assert_container_sees_exactly(cluster, pod, ids)
        assert seen["npu-numa-pod"] == [0, 1]  # the seed's NUMA node 6 holds npu-0 and npu-1
        assert len(seen["npu-pod"]) == 1
        assert seen["npu-pod"][0] not in (0, 1)

        uids = {pod: cluster.claim_uids(pod)[0] for pod in seen}
        for pod, uid in uids.items():
            cluster.delete_pod(pod)
            wait_for(
                lambda uid=uid: (
                    uid not in cluster.checkpointed_uids() and uid not in cluster.cdi_spec_uids()
                ),
                timeout=60,
                what=f"the kubelet to unprepare the claim of {pod}",
            )
        assert plugin.running(), plugin.tail()
    cluster.plane.kubectl("delete", "resourceclaim", "npu-numa-claim", "-n", "ascend-dra")
    cluster.plane.kubectl(
        "delete", "resourceclaimtemplate", "npu-claim-template", "-n", "ascend-dra"
    )
