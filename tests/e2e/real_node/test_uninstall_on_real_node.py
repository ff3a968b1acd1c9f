"""`helm uninstall` on the real node while a pod holds an NPU (issue #27, "clean uninstall").

The chart is installed with the real helm on the image built from the Dockerfile, a pod claims
one NPU, and the release is uninstalled. The uninstall deletes the DaemonSet, then its RBAC and
ServiceAccount; the garbage collector deletes the plugin pod, which gets SIGTERM. The plugin saw
its DaemonSet deleted (a watch opened at start), so it does not stop: its pod stays Terminating,
the NPU pod keeps running with its CDI spec, and its sockets still answer. Once the NPU pod is
deleted the kubelet unprepares its claim through the plugin (the pod object goes away; without a
plugin it would stay Terminating for good), and the plugin stops: the node is left with no
registration or DRA socket and no CDI spec of the driver, and the kubelet wipes the driver's
ResourceSlices 30 s after its last plugin went (its wipingDelay).

`UNINSTALL_WATCH=off` runs the plugin as it was before #27 (it cannot read its DaemonSet, so it
stops at once on SIGTERM): the same run then fails, the plugin gone with an NPU in use.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.helm_release import (
    Release,
    claim_template,
    helm_release,
    import_image,
    npu_pod,
)
from tests.support.controlplane import wait_for
from tests.support.node_fixtures import IMAGES_CACHE
from tests.support.plugin_image import TAG, build_plugin_image

RELEASE = NAMESPACE = "npu-dra-uninstall"
DRIVER = "uninstall.npu-dra.io"
POD = "holds-an-npu"
HELD_S = 20.0  # how long the plugin is watched outliving the uninstall
WIPING_DELAY_S = 30.0  # the kubelet's (pkg/kubelet/cm/dra/manager.go defaultWipingDelay)


def sockets(cluster: RealCluster) -> list[str]:
    registration = [p.name for p in cluster.registry_dir.glob(f"{DRIVER}*reg.sock")]
    dra = [p.name for p in (cluster.plugins_dir / DRIVER).glob("dra*.sock")]
    return sorted(registration + dra)


def cdi_specs(cluster: RealCluster) -> list[str]:
    return sorted(p.name for p in cluster.node.cdi_root.glob(f"*{DRIVER}*"))


def slices(cluster: RealCluster) -> list[str]:
    found = json.loads(cluster.plane.kubectl("get", "resourceslices", "-o", "json").stdout)
    return [s["metadata"]["name"] for s in found["items"] if s["spec"]["driver"] == DRIVER]


def pod_or_none(cluster: RealCluster, name: str) -> dict[str, Any] | None:
    found = cluster.plane.kubectl("get", "pod", "-n", NAMESPACE, name, "-o", "json", check=False)
    return json.loads(found.stdout) if found.returncode == 0 else None


@pytest.mark.timeout(1200)
def test_helm_uninstall_waits_for_the_npu_pods_then_leaves_nothing_behind(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    archive = build_plugin_image(IMAGES_CACHE, IMAGES_CACHE / "plugin" / "npu-dra.tar")
    import_image(real_cluster, archive, TAG)
    with helm_release(real_cluster, tmp_path, name=RELEASE, driver=DRIVER) as release:
        uninstall_with_an_npu_in_use(release)


def uninstall_with_an_npu_in_use(release: Release) -> None:
    cluster = release.cluster
    release.apply(TAG.rsplit(":", 1)[1])
    release.rolled_out()
    if os.environ.get("UNINSTALL_WATCH") == "off":
        without_its_daemonset(release)
    [plugin] = release.plugin_pods()
    wait_for(lambda: sockets(cluster), timeout=60, what="the plugin registered")
    wait_for(lambda: slices(cluster), timeout=60, what="the node's NPUs published")
    cluster.apply(claim_template(NAMESPACE, DRIVER))
    cluster.apply(npu_pod(POD, NAMESPACE))
    cluster.wait_running(POD, namespace=NAMESPACE)
    specs = cdi_specs(cluster)
    assert len(specs) == 1, specs

    release.uninstall()
    name = plugin["metadata"]["name"]
    wait_for(
        lambda: (pod_or_none(cluster, name) or {"metadata": {"deletionTimestamp": 1}})[
            "metadata"
        ].get("deletionTimestamp"),
        timeout=60,
        what="the plugin pod told to stop",
    )
    deadline = time.monotonic() + HELD_S
    while time.monotonic() < deadline:
        assert pod_or_none(cluster, name) is not None, "the plugin stopped with an NPU in use"
        assert pod_or_none(cluster, POD)["status"]["phase"] == "Running"  # type: ignore[index]
        assert cdi_specs(cluster) == specs
        time.sleep(1)
    assert sockets(cluster)  # still registered: the kubelet can unprepare

    cluster.delete_pod(POD, namespace=NAMESPACE, timeout=90)  # gone: its claim unprepared
    wait_for(lambda: pod_or_none(cluster, name) is None, timeout=60, what="the plugin gone")
    assert sockets(cluster) == []
    assert cdi_specs(cluster) == []
    wait_for(
        lambda: not slices(cluster),
        timeout=WIPING_DELAY_S + 60,
        what="the kubelet to wipe the driver's ResourceSlices",
    )


def without_its_daemonset(release: Release) -> None:
    """The plugin restarted unable to read its DaemonSet: the behaviour before #27."""
    kubectl = release.cluster.plane.kubectl
    kubectl("delete", "rolebinding", "-n", NAMESPACE, RELEASE)
    [old] = release.plugin_pods()
    kubectl("delete", "pod", "-n", NAMESPACE, old["metadata"]["name"])

    def replaced() -> bool:
        pods = release.plugin_pods()
        new = [p for p in pods if p["metadata"]["uid"] != old["metadata"]["uid"]]
        return len(pods) == 1 and bool(new) and new[0]["status"].get("phase") == "Running"

    wait_for(replaced, timeout=120, what="the plugin restarted without its RoleBinding")
