"""A node moved from the classic device plugin (`huawei.com/Ascend910`) to DRA on the real node,
as docs/upgrade.md's "One API per node" says: cordon, switch the plugins, uncordon.

While the classic plugin runs, the DRA plugin refuses to start and names it. After the switch a
pod that got two NPUs through the classic plugin keeps running with them, the DRA plugin leaves
exactly those two out of its pool (the kubelet's device checkpoint still holds them for that
pod), a DRA pod gets one of the other six, and once the classic pod has gone the DRA plugin
publishes all eight again.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.test_device_plugin_on_real_node import allocatable, classic_pod
from tests.e2e.real_node.test_restarts_on_real_node import TEMPLATE, pod_with_one_npu
from tests.e2e.real_node.test_seed_on_real_node import char_devices
from tests.support.controlplane import wait_for

HEALTH_INTERVAL = "--health-interval=2"


@pytest.mark.timeout(600)
def test_a_node_moves_from_the_classic_plugin_to_dra_with_its_pod_running(
    real_cluster: RealCluster,
) -> None:
    cluster = real_cluster
    classic = cluster.start_plugin("classic", cluster.device_plugin_argv("--health-interval=5"))
    try:
        wait_for(lambda: allocatable(cluster) == 8, timeout=90, what="8 Ascend910 advertised")
        cluster.apply(classic_pod("classic-mover", 2))
        cluster.wait_running("classic-mover", "default")
        held = davinci_in_default(cluster, "classic-mover")
        assert len(held) == 2, held
        dra_argv = [HEALTH_INTERVAL if a.startswith("--health-interval") else a
                    for a in cluster.dra_argv()]  # fmt: skip
        refused = subprocess.run(dra_argv, capture_output=True, text=True, timeout=60, check=False)
        assert refused.returncode == 1, refused.stderr[-2000:]
        assert "the classic device plugin serves this node's NPUs" in refused.stderr
        cluster.plane.kubectl("cordon", cluster.node.name)
    finally:
        classic.stop()  # the switch: the classic plugin goes
    dra = cluster.start_plugin("dra-after-classic", dra_argv)
    try:
        cluster.wait_registered(dra)
        free = {f"npu-{n}" for n in range(8)} - {f"npu-{n}" for n in held}
        wait_for(lambda: set(cluster.published()) == free, timeout=60, what=f"{sorted(free)}")
        cluster.plane.kubectl("uncordon", cluster.node.name)
        assert davinci_in_default(cluster, "classic-mover") == held  # untouched
        cluster.apply(TEMPLATE)
        cluster.apply(pod_with_one_npu("dra-after-classic"))
        cluster.wait_running("dra-after-classic")
        [claim] = cluster.claim_uids("dra-after-classic")
        [device] = cluster.allocated_devices(claim)
        assert device in free
        cluster.delete_pod("classic-mover", "default")
        wait_for(lambda: len(cluster.published()) == 8, timeout=60, what="all 8 published again")
        cluster.delete_pod("dra-after-classic")
    finally:
        dra.stop()
        cluster.plane.kubectl("uncordon", cluster.node.name, check=False)


def davinci_in_default(cluster: RealCluster, pod: str) -> list[int]:
    """The chips a pod of the default namespace (the classic plugin's) sees."""
    nodes = char_devices(cluster.in_container(pod, "ls", "-ln", "/dev", namespace="default"))
    return sorted(int(n.removeprefix("davinci")) for n in nodes if re.fullmatch(r"davinci\d+", n))
