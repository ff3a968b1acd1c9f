"""The chart's GPU profile as a real DaemonSet on the real node: `helm template` with
`deviceProfile: gpu`, applied, on a node with a fake NVIDIA host (tests/support/nvidia_host.py:
device nodes, nvidia-smi, and the C stand-in for libnvidia-ml.so.1 under a driver root of its
own). The plugin's container runs the real nvml backend (nvidia-ml-py) on the library it finds
under the mounted driver root, publishes the GPUs under gpu.npu-dra.io, and a pod claiming one
from the chart's DeviceClass starts with exactly that GPU's device node, the driver's files
mounted from their host paths, and NVIDIA_VISIBLE_DEVICES naming the GPU."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.helm_cli import Helm, build_helm
from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.test_seed_on_real_node import char_devices
from tests.support.controlplane import wait_for
from tests.support.node import SEED_IMAGE
from tests.support.node_fixtures import IMAGES_CACHE
from tests.support.nvidia_host import LIBRARY_DIR, LOCAL_MAJOR, SHARED_MINORS, fake_nvidia_host
from tests.support.plugin_image import build_plugin_image

RELEASE = NAMESPACE = "npu-dra-gpu"
DRIVER = "gpu.npu-dra.io"
GPU_LABEL = "nvidia.com/gpu.present"
CLAIM_AND_POD = f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: one-gpu, namespace: {NAMESPACE}}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {{deviceClassName: {DRIVER}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: gpu-pod, namespace: {NAMESPACE}}}
spec:
  terminationGracePeriodSeconds: 1
  resourceClaims:
  - {{name: gpu, resourceClaimTemplateName: one-gpu}}
  containers:
  - name: app
    image: {SEED_IMAGE}
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
    resources:
      claims:
      - name: gpu
"""


def rendered_for_test_node(helm: Helm, cluster: RealCluster, driver_root: Path) -> str:
    """The chart's render with the GPU profile, and two things this node needs: the API server
    at its loopback address (no kube-proxy here) and the stand-in's host description."""
    documents = helm.template(
        release=RELEASE,
        values={
            "deviceProfile": "gpu",
            "fullnameOverride": RELEASE,
            "namespace": {"create": True, "name": NAMESPACE},
            "gpu": {"driverRoot": str(driver_root)},
        },
    )
    [daemonset] = [d for d in documents if d["kind"] == "DaemonSet"]
    [container] = daemonset["spec"]["template"]["spec"]["containers"]
    container["env"] += [
        {"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"},
        {"name": "KUBERNETES_SERVICE_PORT", "value": cluster.plane.server.rsplit(":", 1)[1]},
        {"name": "NVML_STUB_HOST", "value": f"/driver-root/{LIBRARY_DIR}/nvml-stub-host.txt"},
    ]
    return yaml.safe_dump_all(documents)


def gpu_slices(cluster: RealCluster) -> list[dict[str, Any]]:
    found = json.loads(cluster.plane.kubectl("get", "resourceslices", "-o", "json").stdout)
    return [s for s in found["items"] if s["spec"]["driver"] == DRIVER]


def plugin_pods(cluster: RealCluster) -> list[dict[str, Any]]:
    found = cluster.plane.kubectl(
        "get", "pods", "-n", NAMESPACE, "-l", f"app={RELEASE}", "-o", "json"
    )
    return list(json.loads(found.stdout)["items"])


def allocated_gpu(cluster: RealCluster) -> dict[str, Any]:
    claims = json.loads(
        cluster.plane.kubectl("get", "resourceclaims", "-n", NAMESPACE, "-o", "json").stdout
    )["items"]
    [claim] = claims
    [result] = claim["status"]["allocation"]["devices"]["results"]
    [device] = [
        d
        for s in gpu_slices(cluster)
        for d in s["spec"]["devices"]
        if d["name"] == result["device"]
    ]
    return dict(device)


@pytest.mark.timeout(900)
def test_the_charts_gpu_profile_runs_nvml_and_serves_a_gpu_pod(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    cluster = real_cluster
    (tmp_path / "helm-home").mkdir()
    helm = Helm(_helm_binary(), tmp_path / "helm-home")
    archive = build_plugin_image(IMAGES_CACHE, IMAGES_CACHE / "plugin" / "npu-dra.tar")
    cluster.node.ctr("images", "import", str(archive), timeout=600)
    cluster.plane.kubectl("label", "node", cluster.node.name, f"{GPU_LABEL}=true", "--overwrite")
    with fake_nvidia_host(2, tmp_path / "nvidia-driver") as host:
        rendered = rendered_for_test_node(helm, cluster, host.driver_root)
        cluster.apply(rendered)
        try:
            wait_for(lambda: plugin_pods(cluster), timeout=60, what="the GPU DaemonSet's pod")
            name = plugin_pods(cluster)[0]["metadata"]["name"]
            cluster.wait_running(name, namespace=NAMESPACE, timeout=180)
            try:
                wait_for(lambda: gpu_slices(cluster), timeout=90, what="GPUs published")
            except TimeoutError as error:
                raise AssertionError(f"{error}\n{cluster.diagnose(name, NAMESPACE)}") from None
            [pool] = gpu_slices(cluster)
            assert sorted(d["name"] for d in pool["spec"]["devices"]) == ["gpu-0", "gpu-1"]
            assert pool["spec"]["nodeName"] == cluster.node.name
            cluster.apply(CLAIM_AND_POD)
            cluster.wait_running("gpu-pod", namespace=NAMESPACE)
            _assert_pod_has_exactly(cluster, allocated_gpu(cluster))
            rollout = cluster.plane.kubectl(
                "rollout", "status", "-n", NAMESPACE, f"daemonset/{RELEASE}",
                "--timeout=120s", check=False, timeout=150,
            )  # fmt: skip
            assert rollout.returncode == 0, rollout.stdout + rollout.stderr
        finally:
            cluster.delete_pod("gpu-pod", namespace=NAMESPACE)
            cluster.plane.kubectl(
                "delete", "-f", "-", "--wait=true", input=rendered, check=False, timeout=120
            )
            cluster.plane.kubectl("label", "node", cluster.node.name, f"{GPU_LABEL}-", check=False)
            wait_for(lambda: not plugin_pods(cluster), timeout=90, what="the GPU plugin gone")


def _assert_pod_has_exactly(cluster: RealCluster, gpu: dict[str, Any]) -> None:
    minor = gpu["attributes"]["minor"]["int"]
    uuid = gpu["attributes"]["uuid"]["string"]
    nodes = char_devices(cluster.in_container("gpu-pod", "ls", "-ln", "/dev", namespace=NAMESPACE))
    gpus = {n: number for n, number in nodes.items() if re.fullmatch(r"nvidia\d+", n)}
    assert gpus == {f"nvidia{minor}": (LOCAL_MAJOR, minor)}, nodes
    assert nodes.get("nvidiactl") == (LOCAL_MAJOR, SHARED_MINORS["nvidiactl"]), nodes
    env = cluster.in_container("gpu-pod", "env", namespace=NAMESPACE).splitlines()
    assert f"NVIDIA_VISIBLE_DEVICES={uuid}" in env, env
    assert "LD_LIBRARY_PATH=/usr/local/nvidia/lib64" in env, env
    libraries = cluster.in_container(
        "gpu-pod", "ls", "/usr/local/nvidia/lib64", namespace=NAMESPACE
    )
    assert "libnvidia-ml.so.1" in libraries.split(), libraries
    smi = cluster.in_container("gpu-pod", "nvidia-smi", namespace=NAMESPACE)
    assert smi.splitlines() == ["NVIDIA-SMI (fake) sees:", f"/dev/nvidia{minor}"], smi


def _helm_binary() -> Path:
    built = build_helm()
    if isinstance(built, str):
        raise AssertionError(f"helm could not be built: {built}")
    return built
