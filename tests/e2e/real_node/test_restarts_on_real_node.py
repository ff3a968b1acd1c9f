"""Restarts on a real node: the kubelet restarting re-registers the plugin and leaves running pods
their devices; the plugin killed with SIGKILL while pods are being created costs nothing once it
is back (the kubelet retries), and no pod gets another pod's NPU."""

from __future__ import annotations

import re

import pytest

from tests.e2e.real_node.cluster import REGISTERED, RealCluster, running_dra_plugin
from tests.e2e.real_node.test_seed_on_real_node import char_devices
from tests.e2e.seed_yaml import SEED_POD_SPEC
from tests.support.controlplane import wait_for

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-npu
  namespace: ascend-dra
spec:
  spec:
    devices:
      requests:
      - name: npu
        exactly:
          deviceClassName: npu.huawei.com
"""


def pod_with_one_npu(name: str) -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n"
        f"  name: {name}\n  namespace: ascend-dra\nspec:\n"
        "  terminationGracePeriodSeconds: 1\n"
        "  resourceClaims:\n  - name: npu\n    resourceClaimTemplateName: one-npu\n" + SEED_POD_SPEC
    )


def davinci_in(cluster: RealCluster, pod: str) -> list[int]:
    nodes = char_devices(cluster.in_container(pod, "ls", "-ln", "/dev"))
    return sorted(int(n.removeprefix("davinci")) for n in nodes if re.fullmatch(r"davinci\d+", n))


def registrations(cluster: RealCluster) -> int:
    log = (cluster.node.log_dir / "kubelet.log").read_text(errors="replace")
    return len(REGISTERED.findall(log))


@pytest.mark.timeout(600)
def test_kubelet_restart_reregisters_and_running_pods_keep_their_npu(
    real_cluster: RealCluster,
) -> None:
    cluster = real_cluster
    cluster.apply(TEMPLATE)
    with running_dra_plugin(cluster) as plugin:
        cluster.wait_registered(plugin)
        cluster.apply(pod_with_one_npu("before-restart"))
        cluster.wait_running("before-restart")
        before = davinci_in(cluster, "before-restart")
        registered = registrations(cluster)

        cluster.node.stop_kubelet()
        cluster.node.start_kubelet()
        cluster.node.wait_ready()
        wait_for(
            lambda: registrations(cluster) > registered,
            timeout=60,
            what="the restarted kubelet to register the plugin again",
        )
        assert davinci_in(cluster, "before-restart") == before
        cluster.apply(pod_with_one_npu("after-restart"))
        cluster.wait_running("after-restart")
        after = davinci_in(cluster, "after-restart")
        assert len(after) == 1
        assert after != before
        for pod in ("before-restart", "after-restart"):
            cluster.delete_pod(pod)
        assert plugin.running(), plugin.tail()


@pytest.mark.timeout(600)
def test_plugin_killed_while_pods_start_every_pod_runs_with_its_own_npu(
    real_cluster: RealCluster,
) -> None:
    cluster = real_cluster
    cluster.apply(TEMPLATE)
    pods = [f"storm-{n}" for n in range(6)]
    with running_dra_plugin(cluster) as plugin:
        cluster.wait_registered(plugin)
        cluster.apply("---\n".join(pod_with_one_npu(p) for p in pods))
        wait_for(
            lambda: len(cluster.checkpointed_uids()) >= 2,
            timeout=60,
            what="some claims prepared before the kill",
        )
        plugin.stop(kill=True)
    with running_dra_plugin(cluster) as plugin:
        seen = {}
        for pod in pods:
            cluster.wait_running(pod, timeout=180)
            seen[pod] = davinci_in(cluster, pod)
        assert all(len(ids) == 1 for ids in seen.values()), seen
        everything = [ids[0] for ids in seen.values()]
        assert len(set(everything)) == len(pods), seen  # no NPU in two pods
        for pod in pods:
            cluster.delete_pod(pod)
        wait_for(
            lambda: not cluster.checkpointed_uids() - {""} and not cluster.cdi_spec_uids(),
            timeout=90,
            what="every claim unprepared",
        )
        assert plugin.running(), plugin.tail()
