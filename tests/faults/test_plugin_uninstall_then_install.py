"""Uninstall × a new install, on the plugin process: the chart's default configuration (per-pod
sockets: SEAMLESS_UPGRADE=on and POD_UID; the DaemonSet it watches; claim prefetch on, with the
rule the chart adds for it), a real v1.34.3 API server, a token bound to its stand-in pod.

The DaemonSet is deleted, the plugin gets SIGTERM and drains (a claim is still prepared), and the
DaemonSet is created again before that claim's pod ended. The plugin must notice the uninstall
is cancelled and stop as on any other SIGTERM, its claim and CDI spec kept for the new plugin
pod, instead of refusing prepares and draining until the kubelet kills it (3600 s in the chart).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import uuid
from collections.abc import Iterator

import yaml

from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from tests.e2e.seed_cluster import ACCOUNT, MANIFESTS, NAMESPACE, prefetch_granted
from tests.faults.harness import FETCH_TIMEOUT_S, FaultNode, PluginRun, create_claims, fault_node
from tests.support.controlplane import ControlPlane, wait_for

DAEMONSET = ACCOUNT  # the name deploy/manifests give it, and its Role grants watching
STOP_S = 30.0  # how long the test waits for a step before it fails


def chart_defaults() -> dict[str, str]:
    return {
        "SEAMLESS_UPGRADE": "on",
        "POD_UID": str(uuid.uuid4()),
        "DAEMONSET_NAME": DAEMONSET,
        "POD_NAMESPACE": NAMESPACE,
        "CLAIM_PREFETCH": "true",
        "CLAIM_FETCH_TIMEOUT": str(FETCH_TIMEOUT_S),
    }


@contextlib.contextmanager
def daemonset_watch_granted(plane: ControlPlane) -> Iterator[None]:
    """deploy/manifests' Role and RoleBinding: the plugin may watch its own DaemonSet."""
    documents = yaml.safe_load_all((MANIFESTS / "20-rbac.yaml").read_text())
    roles = [doc for doc in documents if doc and doc["kind"] in ("Role", "RoleBinding")]
    plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(roles))
    try:
        yield
    finally:
        plane.kubectl("delete", "-n", NAMESPACE, "rolebinding,role", ACCOUNT, "--ignore-not-found",
                      check=False)  # fmt: skip


def apply_daemonset(plane: ControlPlane) -> None:
    """The plugin's DaemonSet, selecting no node (the stand-in pod plays its pod)."""
    labels = {"app": DAEMONSET}
    body = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": DAEMONSET, "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": {"npu-dra.test/nowhere": "true"},
                    "containers": [{"name": "kubeletplugin", "image": "npu-dra:0.1.0"}],
                },
            },
        },
    }
    plane.kubectl("apply", "-f", "-", input=json.dumps(body))


def logged(node: FaultNode, words: str) -> bool:
    return words in node.host.log.read_text(errors="replace")


def until_logged(node: FaultNode, words: str) -> None:
    try:
        wait_for(lambda: logged(node, words), timeout=STOP_S, what=repr(words))
    except TimeoutError as error:
        raise AssertionError(f"{error}; the plugin's log:\n{node.host.log.read_text()}") from None


def test_uninstall_then_a_new_install_stops_the_drain_keeping_the_state(
    access: ControlPlane,
) -> None:
    with (
        prefetch_granted(access),
        daemonset_watch_granted(access),
        fault_node(access, "ds-back") as node,
    ):
        apply_daemonset(access)
        try:
            held, refused = create_claims(node, [["npu-0"], ["npu-1"]])
            plugin = node.plugin = PluginRun.start(node, chart_defaults())
            with node.kubelet() as kubelet:
                assert kubelet.prepare([held]).claims[held.uid].error == ""
                access.kubectl("delete", "daemonset", "-n", NAMESPACE, DAEMONSET, "--wait=false")
                until_logged(node, "being uninstalled")
                os.killpg(plugin.popen.pid, signal.SIGTERM)
                until_logged(node, "uninstalling: waiting for")
                assert "being uninstalled" in kubelet.prepare([refused]).claims[refused.uid].error
                apply_daemonset(access)  # installed anew before the held claim's pod ended
                wait_for(lambda: not plugin.running(), timeout=STOP_S, what="the plugin to stop")
        finally:
            access.kubectl("delete", "daemonset", "-n", NAMESPACE, DAEMONSET, "--ignore-not-found",
                           check=False)  # fmt: skip
        assert plugin.popen.returncode == 0, plugin.log()
        assert logged(node, "uninstall cancelled")
        assert node.spec_uids() == {held.uid}  # kept for the new plugin pod
        assert set(FileCheckpointStore(node.checkpoint).load().claims) == {held.uid}
