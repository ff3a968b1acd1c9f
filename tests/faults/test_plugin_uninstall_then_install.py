"""Uninstall × a new install, on the plugin process: the chart's default configuration (per-pod
sockets: SEAMLESS_UPGRADE=on and POD_UID; the DaemonSet it watches; claim prefetch on, with the
rule the chart adds for it), a real v1.34.3 API server, a token bound to its stand-in pod.

The DaemonSet is deleted, the plugin gets SIGTERM and drains (a claim is still prepared), and the
DaemonSet is created again before that claim's pod ended. The plugin must notice the uninstall
is cancelled and stop as on any other SIGTERM, its claim and CDI spec kept for the new plugin
pod, instead of refusing prepares and draining until the kubelet kills it (3600 s in the chart).
"""

from __future__ import annotations

import os
import signal

from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from tests.e2e.seed_cluster import NAMESPACE, prefetch_granted
from tests.faults.harness import FaultNode, PluginRun, create_claims, fault_node
from tests.faults.plugin_defaults import (
    DAEMONSET,
    STOP_S,
    apply_daemonset,
    chart_defaults,
    daemonset_watch_granted,
)
from tests.support.controlplane import ControlPlane, wait_for


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
