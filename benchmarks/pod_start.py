"""Pod start on a real node: kubelet v1.34.3 + containerd 2.1 + runc (tests/support/node.py), the
plugins as processes with the DaemonSet's flags, a fake Ascend host (real device nodes, the
recorded 8x 910B4 npu-smi).

* DRA: pod creation -> Running for a pod with one NPU claim from a ResourceClaimTemplate (the
  scheduler allocates, the kubelet prepares through our plugin, containerd injects our CDI spec).
* Classic: pod creation -> Running for a pod asking `huawei.com/Ascend910: 1` (the kubelet's device
  manager calls our device plugin's GetPreferredAllocation and Allocate).

Pods are created one at a time and deleted (untimed) before the next; p50/p95 over ROUNDS pods.
The first run builds the node (tests/e2e/node/build.sh) and the control plane if missing.
Run from the repository root: `python -m benchmarks.pod_start`.
"""

from __future__ import annotations

import statistics
import time

from kubernetes import client

from benchmarks._real_node import real_node
from tests.e2e.real_node.cluster import RealCluster, running_dra_plugin
from tests.e2e.real_node.test_device_plugin_on_real_node import classic_pod
from tests.e2e.real_node.test_restarts_on_real_node import TEMPLATE, pod_with_one_npu
from tests.support.controlplane import wait_for

ROUNDS = 20


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _time_to_running(cluster: RealCluster, manifest: str, name: str, namespace: str) -> float:
    started = time.perf_counter()
    cluster.apply(manifest)
    core = client.CoreV1Api(cluster.plane.api_client)

    def running() -> bool:
        status = core.read_namespaced_pod(name, namespace).status
        return bool(status and status.phase == "Running")

    wait_for(running, timeout=120, what=f"{name} Running", interval=0.02)
    elapsed = time.perf_counter() - started
    cluster.delete_pod(name, namespace)
    return elapsed


def _report(label: str, samples: list[float]) -> None:
    print(
        f"  {label}: p50 {statistics.median(samples) * 1000:.0f} ms, "
        f"p95 {_percentile(samples, 0.95) * 1000:.0f} ms, "
        f"min {min(samples) * 1000:.0f} ms, max {max(samples) * 1000:.0f} ms (n={len(samples)})"
    )


def _dra(cluster: RealCluster) -> list[float]:
    cluster.apply(TEMPLATE)
    with running_dra_plugin(cluster) as plugin:
        cluster.wait_registered(plugin)
        wait_for(lambda: len(cluster.published()) == 8, timeout=60, what="8 NPUs published")
        return [
            _time_to_running(
                cluster, pod_with_one_npu(f"bench-dra-{n}"), f"bench-dra-{n}", "ascend-dra"
            )
            for n in range(ROUNDS)
        ]


def _classic(cluster: RealCluster) -> list[float]:
    plugin = cluster.start_plugin("bench-device-plugin", cluster.device_plugin_argv())
    try:
        core = client.CoreV1Api(cluster.plane.api_client)

        def advertised() -> bool:
            node = core.read_node(cluster.node.name)
            return (node.status.allocatable or {}).get("huawei.com/Ascend910") == "8"

        wait_for(advertised, timeout=90, what="8 huawei.com/Ascend910 advertised")
        return [
            _time_to_running(
                cluster, classic_pod(f"bench-classic-{n}", 1), f"bench-classic-{n}", "default"
            )
            for n in range(ROUNDS)
        ]
    finally:
        plugin.stop()


def main() -> None:
    with real_node("bench-node-") as found:
        if found is None:
            return
        cluster, _ = found
        print("pod creation -> Running on a real node (kubelet v1.34.3, containerd 2.1.5, runc)")
        _report("DRA, one NPU claim (template)", _dra(cluster))
        _report("classic device plugin, huawei.com/Ascend910: 1", _classic(cluster))


if __name__ == "__main__":
    main()
