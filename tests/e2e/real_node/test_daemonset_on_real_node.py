"""deploy/manifests' DaemonSet as a real pod on the real node, in a cluster with a second, plain
node: the DaemonSet runs only on the node labelled as an NPU node and its rollout completes. The
image is built from the Dockerfile's contents (tests/support/plugin_image.py), privileged, with
its hostPath mounts of /dev, /sys, the kubelet's directories, /var/run/cdi, /usr/local/Ascend and
npu-smi; the kubelet's gRPC liveness probe passes, the plugin publishes the node's NPUs and a pod
starts through it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.test_restarts_on_real_node import TEMPLATE, pod_with_one_npu
from tests.e2e.real_node.test_seed_on_real_node import assert_container_sees_exactly
from tests.support.ascend_host import fake_ascend_host
from tests.support.controlplane import wait_for
from tests.support.node_fixtures import IMAGES_CACHE
from tests.support.plugin_image import build_plugin_image

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "manifests" / "50-daemonset.yaml"
LIVENESS_WINDOW_S = 50.0  # initialDelaySeconds 30 + two 10 s periods
PLAIN_NODE = {"name": "cpu-node-1", "labels": {"kubernetes.io/hostname": "cpu-node-1"}}


def manifest_for_test_node(cluster: RealCluster) -> str:
    """The DaemonSet as written, but for one thing: this node runs no kube-proxy, so the
    in-cluster API address (the `kubernetes` Service's cluster IP the kubelet injects) leads
    nowhere; the container is pointed at the API server's loopback address instead."""
    daemonset = yaml.safe_load(MANIFEST.read_text())
    [container] = daemonset["spec"]["template"]["spec"]["containers"]
    port = cluster.plane.server.rsplit(":", 1)[1]
    container["env"] += [
        {"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"},
        {"name": "KUBERNETES_SERVICE_PORT", "value": port},
    ]
    return yaml.safe_dump(daemonset)


def daemonset_pod(cluster: RealCluster) -> dict[str, object] | None:
    found = json.loads(
        cluster.plane.kubectl(
            "get",
            "pods",
            "-n",
            "ascend-dra",
            "-l",
            "app=ascend-npu-dra-kubeletplugin",
            "-o",
            "json",
        ).stdout
    )
    return found["items"][0] if found["items"] else None


def add_plain_node(cluster: RealCluster) -> None:
    """A second Node without NPUs (and without a kubelet: the DaemonSet controller only needs
    the object), as in a mixed cluster."""
    cluster.apply(yaml.safe_dump({"apiVersion": "v1", "kind": "Node", "metadata": PLAIN_NODE}))


def daemonset_pods(cluster: RealCluster) -> list[dict[str, Any]]:
    found = cluster.plane.kubectl(
        "get", "pods", "-n", "ascend-dra", "-l", "app=ascend-npu-dra-kubeletplugin", "-o", "json"
    ).stdout
    return list(json.loads(found)["items"])


@pytest.mark.timeout(900)
def test_daemonset_runs_only_on_the_npu_node_passes_liveness_and_serves_a_seed_pod(
    real_cluster: RealCluster,
) -> None:
    cluster = real_cluster
    archive = build_plugin_image(IMAGES_CACHE, IMAGES_CACHE / "plugin" / "npu-dra.tar")
    cluster.node.ctr("images", "import", str(archive), timeout=600)
    # The quickstart's step: the NPU node carries the label the DaemonSet selects on.
    cluster.plane.kubectl("label", "node", cluster.node.name, "accelerator=huawei-Ascend910")
    add_plain_node(cluster)
    with fake_ascend_host(range(8), dev_dir=Path("/dev"), only_devices=True):
        cluster.apply(manifest_for_test_node(cluster))
        try:
            wait_for(lambda: daemonset_pod(cluster), timeout=60, what="the DaemonSet's pod")
            pod = daemonset_pod(cluster)
            assert pod is not None
            name = pod["metadata"]["name"]  # type: ignore[index]
            cluster.wait_running(name, timeout=180)
            rollout = cluster.plane.kubectl(
                "rollout", "status", "-n", "ascend-dra", "daemonset/ascend-npu-dra-kubeletplugin",
                "--timeout=120s", check=False, timeout=150,
            )  # fmt: skip
            assert rollout.returncode == 0, rollout.stdout + rollout.stderr
            nodes = [p["spec"].get("nodeName") for p in daemonset_pods(cluster)]
            assert nodes == [cluster.node.name]  # none for the plain node
            try:
                wait_for(lambda: len(cluster.published()) == 8, timeout=90, what="8 NPUs published")
            except TimeoutError as error:
                raise AssertionError(
                    f"{error}; published: {sorted(cluster.published())}\n"
                    f"{cluster.diagnose(name, 'ascend-dra')}"
                ) from None
            started = time.monotonic()
            # (no NUMA claim here: the pod reads the host's /sys, where the fake chips have none)
            cluster.apply(TEMPLATE)
            cluster.apply(pod_with_one_npu("ds-pod"))
            cluster.wait_running("ds-pod")
            [uid] = cluster.claim_uids("ds-pod")
            ids = sorted(int(d.removeprefix("npu-")) for d in cluster.allocated_devices(uid))
            assert_container_sees_exactly(cluster, "ds-pod", ids)
            cluster.delete_pod("ds-pod")
            time.sleep(max(0.0, LIVENESS_WINDOW_S - (time.monotonic() - started)))
            status = cluster.read_pod(name)["status"]
            [container] = status["containerStatuses"]
            assert container["restartCount"] == 0, status
            assert container["ready"], status
            # The kubelet's gRPC liveness probe never failed. (Its readiness probe may, while
            # the start is still publishing: NOT_SERVING until then is what it is for; a cold
            # `make test` building v1.36.3 and the arm64 image beside it was slow enough.)
            unhealthy = cluster.plane.kubectl(
                "get", "events", "-n", "ascend-dra",
                "--field-selector", f"involvedObject.name={name},reason=Unhealthy",
                "-o", "jsonpath={range .items[*]}{.message}{'\\n'}{end}",
            ).stdout  # fmt: skip
            liveness = [m for m in unhealthy.splitlines() if m.startswith("Liveness")]
            assert not liveness, unhealthy
        finally:
            cluster.plane.kubectl(
                "delete", "-f", str(MANIFEST), "--wait=true", check=False, timeout=120
            )
            cluster.plane.kubectl("delete", "node", PLAIN_NODE["name"], check=False, timeout=60)
            wait_for(
                lambda: daemonset_pod(cluster) is None, timeout=90, what="the DaemonSet's pod gone"
            )
