"""The chart installed by the real helm on the real node, as the upgrade tests drive it: its own
release, namespace and driver name (beside the session's access objects), images imported into
the node's containerd under the tags the releases name, pods claiming one NPU each, and on the
way out the pods deleted while a plugin can still unprepare them, then the release uninstalled.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.helm_cli import CHART, Helm, build_helm
from tests.e2e.real_node.cluster import RealCluster
from tests.support.ascend_host import fake_ascend_host
from tests.support.controlplane import wait_for

NO_SURGE = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}


def claim_template(namespace: str, driver: str) -> str:
    """A ResourceClaimTemplate `one-npu`: one device of the driver's DeviceClass."""
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: one-npu, namespace: {namespace}}}
spec:
  spec:
    devices:
      requests:
      - name: npu
        exactly: {{deviceClassName: {driver}}}
"""


def npu_pod(name: str, namespace: str) -> str:
    """A pod that sleeps holding one NPU from `one-npu`."""
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  terminationGracePeriodSeconds: 1
  resourceClaims:
  - {{name: npu, resourceClaimTemplateName: one-npu}}
  containers:
  - name: app
    image: docker.io/library/ubuntu:22.04
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
    resources:
      claims:
      - name: npu
"""


def values(
    cluster: RealCluster, name: str, driver: str, tag: str, *, surge: bool
) -> dict[str, Any]:
    """Values every chart since v0.1.0 accepts: the release's own names, the image `npu-dra:tag`,
    and the API server at the node's loopback address (this node runs no kube-proxy)."""
    port = cluster.plane.server.rsplit(":", 1)[1]
    chosen: dict[str, Any] = {
        "fullnameOverride": name,
        "namespace": {"create": False, "name": name},  # helm --create-namespace makes it
        "driverName": driver,
        "image": {"repository": "npu-dra", "tag": tag},
        "extraEnv": [
            {"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"},
            {"name": "KUBERNETES_SERVICE_PORT", "value": port},
        ],
    }
    if not surge:
        chosen["updateStrategy"] = NO_SURGE
    return chosen


class Release:
    """One helm release of the chart; its name is also its namespace and DaemonSet's name."""

    def __init__(
        self, helm: Helm, cluster: RealCluster, home: Path, *, name: str, driver: str, surge: bool
    ) -> None:
        self.helm, self.cluster, self.home = helm, cluster, home
        self.name = self.namespace = name
        self.driver, self.surge = driver, surge

    def apply(self, tag: str, chart: Path = CHART) -> None:
        """`helm upgrade --install` of `chart` (HEAD's, or a release's exported one)."""
        given = self.home / f"values-{tag}.yaml"
        chosen = values(self.cluster, self.name, self.driver, tag, surge=self.surge)
        given.write_text(yaml.safe_dump(chosen))
        self.helm.run(
            "upgrade", "--install", self.name, str(chart), "--kubeconfig", self._kubeconfig,
            "--namespace", self.namespace, "--create-namespace", "--values", str(given),
        )  # fmt: skip

    def uninstall(self) -> None:
        self.helm.run("uninstall", self.name, "--kubeconfig", self._kubeconfig,
                      "--namespace", self.namespace, check=False)  # fmt: skip

    def pods(self) -> list[dict[str, Any]]:
        found = self.cluster.plane.kubectl("get", "pods", "-n", self.namespace, "-o", "json")
        return list(json.loads(found.stdout)["items"])

    def plugin_pods(self) -> list[dict[str, Any]]:
        return [p for p in self.pods() if p["metadata"].get("labels", {}).get("app") == self.name]

    def rolled_out(self, timeout: float = 240) -> None:
        done = self.cluster.plane.kubectl(
            "rollout", "status", "-n", self.namespace, f"daemonset/{self.name}",
            f"--timeout={int(timeout)}s", check=False, timeout=timeout + 30,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr

    def delete_workloads(self) -> None:
        """Every pod but the plugin's, deleted while a plugin can unprepare their claims."""
        plugins = {p["metadata"]["name"] for p in self.plugin_pods()}
        for pod in {p["metadata"]["name"] for p in self.pods()} - plugins:
            with contextlib.suppress(TimeoutError):
                self.cluster.delete_pod(pod, self.namespace)

    @property
    def _kubeconfig(self) -> str:
        return str(self.cluster.plane.kubeconfig)


def import_image(cluster: RealCluster, archive: Path, image: str, *tags: str) -> None:
    """The docker archive (holding `image`) in the node's containerd, also under `tags`."""
    cluster.node.ctr("images", "import", str(archive), timeout=600)
    for tag in tags:
        cluster.node.ctr("images", "tag", "--force", image, tag)


@contextlib.contextmanager
def helm_release(
    cluster: RealCluster, home: Path, *, name: str, driver: str, surge: bool = True
) -> Iterator[Release]:
    """The node labelled for the chart, helm built, the fake Ascend host in place; on the way
    out the release's other pods deleted, the release uninstalled and its pods gone."""
    cluster.plane.kubectl(
        "label", "node", cluster.node.name, "accelerator=huawei-Ascend910", "--overwrite"
    )
    binary = build_helm()
    if isinstance(binary, str):
        raise AssertionError(f"helm could not be built: {binary}")
    (home / "helm").mkdir(exist_ok=True)
    made = Release(
        Helm(binary, home / "helm"), cluster, home, name=name, driver=driver, surge=surge
    )
    with fake_ascend_host(range(8), dev_dir=Path("/dev"), only_devices=True):
        try:
            yield made
        finally:
            made.delete_workloads()
            made.uninstall()
            wait_for(lambda: not made.pods(), timeout=120, what=f"the pods of {name} gone")
            cluster.plane.kubectl("delete", "namespace", name, "--wait=false", check=False)
