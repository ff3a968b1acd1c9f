"""Device health reaches the pod on a real v1.37.2 kubelet (KEP-4680, ResourceHealthStatus on by
default there): a running pod's NPU that npu-smi reports in Alarm shows as Unhealthy in the
pod's `status.containerStatuses[].allocatedResourcesStatus`, streamed by the plugin's
DRAResourceHealth within one --health-interval, and Healthy again once npu-smi says OK; the
NPU's slice entry carries the NoSchedule taint meanwhile, and the running pod is not evicted.
The kubelet watches over the health service's v1 (a 1.36 kubelet calls v1alpha1): its log and
the plugin's name it.

The plugin runs on the host with the Python fake npu-smi (whose health words a test can flip);
the pods still mount the host's recorded shell npu-smi, as the seed's do."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.real_node.cluster import DRIVER, RealCluster
from tests.e2e.seed_yaml import SEED_TEMPLATE_AND_POD
from tests.support.controlplane import wait_for
from tests.support.fake_npu_smi import FakeNpuSmi

HEALTH_INTERVAL_S = 2.0
# The 1.37 kubelet names the health service it chose (tests/support/node.py turns that line on);
# the plugin names the one it was called over (resource_health_stream.py).
KUBELET_WATCHES_V1 = re.compile(
    r'"Starting WatchResources stream".*healthService="v1\.DRAResourceHealth"'
)
PLUGIN_SERVES_V1 = re.compile(r"kubelet watches device health over v1\b")  # not v1alpha1


def allocated_health(cluster: RealCluster, pod: str) -> list[str]:
    """The health of each device in the pod's status (its resourceID is the device's first CDI
    id, so the one-device pod's list is its NPU's)."""
    status = cluster.read_pod(pod)["status"]
    return [
        resource.get("health", "")
        for container in status.get("containerStatuses") or []
        for entry in container.get("allocatedResourcesStatus") or []
        if entry["name"].startswith("claim:")
        for resource in entry.get("resources") or []
    ]


def slice_taints(cluster: RealCluster, device: str) -> list[dict[str, Any]]:
    return list(cluster.published().get(device, {}).get("taints") or [])


@pytest.mark.timeout(600)
def test_an_alarm_reaches_the_running_pods_status_and_the_slice_then_clears(
    real_cluster_v137: RealCluster, tmp_path: Path
) -> None:
    cluster = real_cluster_v137
    smi = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "smi")
    argv = [a for a in cluster.dra_argv() if not a.startswith(("--health-interval=", "--npu-smi="))]
    argv += [f"--health-interval={HEALTH_INTERVAL_S}", f"--npu-smi={smi.path}"]
    plugin = cluster.start_plugin("dra-plugin-v137", argv)
    try:
        cluster.wait_registered(plugin)
        wait_for(lambda: len(cluster.published()) == 8, timeout=60, what="8 NPUs published")
        cluster.apply(SEED_TEMPLATE_AND_POD)
        cluster.wait_running("npu-pod")
        [uid] = cluster.claim_uids("npu-pod")
        [device] = cluster.allocated_devices(uid)
        wait_for(
            lambda: allocated_health(cluster, "npu-pod") == ["Healthy"],
            timeout=60,
            what=f"{device} Healthy in the pod's status",
        )
        assert KUBELET_WATCHES_V1.search(cluster.node.kubelet_log(5000))
        assert PLUGIN_SERVES_V1.search(plugin.tail(5000))
        card = int(device.removeprefix("npu-"))

        smi.set_health(card, "Alarm")

        wait_for(
            lambda: allocated_health(cluster, "npu-pod") == ["Unhealthy"],
            timeout=60,
            what=f"{device} Unhealthy in the pod's status",
        )
        [taint] = wait_for(lambda: slice_taints(cluster, device), timeout=30, what="the taint")
        assert (taint["key"], taint["effect"]) == (f"{DRIVER}/health", "NoSchedule")
        assert cluster.read_pod("npu-pod")["status"]["phase"] == "Running"  # not evicted

        smi.set_health(card, "OK")

        wait_for(
            lambda: allocated_health(cluster, "npu-pod") == ["Healthy"],
            timeout=60,
            what=f"{device} Healthy again",
        )
        wait_for(lambda: not slice_taints(cluster, device), timeout=30, what="taint removed")
    except (AssertionError, TimeoutError) as error:
        raise AssertionError(
            f"{error}\n--- plugin:\n{plugin.tail(60)}\n--- kubelet:\n{cluster.node.kubelet_log(60)}"
        ) from None
    finally:
        cluster.delete_pod("npu-pod")
        cluster.plane.kubectl(
            "delete",
            "resourceclaimtemplate",
            "npu-claim-template",
            "-n",
            "ascend-dra",
            "--ignore-not-found",
            check=False,
        )
        plugin.stop()
