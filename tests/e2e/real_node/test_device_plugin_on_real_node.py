"""The classic device plugin on the same real node: the kubelet's device manager registers
`huawei.com/Ascend910`, a pod asking for two runs with exactly two NPUs from one NUMA node (the
plugin's preferred allocation), and the NPUs go back to the node when the pod goes."""

from __future__ import annotations

import re

import pytest
import yaml
from kubernetes import client

from tests.e2e.real_node.cluster import SEED_NUMA, RealCluster
from tests.e2e.real_node.test_seed_on_real_node import char_devices
from tests.support.ascend_host import LOCAL_MAJOR
from tests.support.controlplane import wait_for
from tests.support.node import SEED_IMAGE

RESOURCE = "huawei.com/Ascend910"
NAMESPACE = "default"


def classic_pod(name: str, count: int) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {
                        "name": "app",
                        "image": SEED_IMAGE,
                        "imagePullPolicy": "IfNotPresent",
                        "command": ["sleep", "3600"],
                        "resources": {"limits": {RESOURCE: str(count)}},
                    }
                ],
            },
        }
    )


def allocatable(cluster: RealCluster) -> int:
    node = client.CoreV1Api(cluster.plane.api_client).read_node(cluster.node.name)
    return int((node.status.allocatable or {}).get(RESOURCE, "0"))


@pytest.mark.timeout(420)
def test_classic_pod_runs_with_two_npus_of_one_numa_node(real_cluster: RealCluster) -> None:
    cluster = real_cluster
    plugin = cluster.start_plugin(
        "device-plugin", cluster.device_plugin_argv("--health-interval=5")
    )
    try:
        wait_for(
            lambda: allocatable(cluster) == 8,
            timeout=90,
            what=f"the kubelet to advertise 8 {RESOURCE}",
        )
        cluster.apply(classic_pod("classic-2", 2))
        cluster.wait_running("classic-2", NAMESPACE)
        nodes = char_devices(
            cluster.in_container("classic-2", "ls", "-ln", "/dev", namespace=NAMESPACE)
        )
        davinci = sorted(
            int(name.removeprefix("davinci")) for name in nodes if re.fullmatch(r"davinci\d+", name)
        )
        assert len(davinci) == 2, nodes
        assert all(nodes[f"davinci{n}"] == (LOCAL_MAJOR, n) for n in davinci)
        assert SEED_NUMA[davinci[0]] == SEED_NUMA[davinci[1]], davinci  # one NUMA node
        env = cluster.in_container("classic-2", "env", namespace=NAMESPACE)
        assert f"ASCEND_VISIBLE_DEVICES={davinci[0]},{davinci[1]}" in env.splitlines(), env
        smi = cluster.in_container("classic-2", "npu-smi", "info", namespace=NAMESPACE)
        assert "910B4" in smi, smi
        cluster.delete_pod("classic-2", NAMESPACE)
        assert plugin.running(), plugin.tail()
    finally:
        plugin.stop()
