"""Uninstall × a new install: the DaemonSet deleted, the plugin's SIGTERM starting the drain, and
the DaemonSet created again (the chart installed anew, or a manifest re-applied) before the
pods using the node's devices ended. The uninstall is cancelled: the plugin opens its gate
again, stops draining and stops as on any other SIGTERM, its claims and CDI specs kept for the
next instance (docs/uninstall.md).

The node is wired as the plugin wires it (app/container.py: the DaemonSet watch, the gate, the
drain), over in-memory adapters; the drain runs on its own thread, given the DaemonSet's fate as
the runner gives it (app/commands/kubelet_plugin_runtime.py).
"""

from __future__ import annotations

import threading
from pathlib import Path

from dependency_injector import providers

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.cluster.memory_daemonsets import MemoryDaemonSets
from npu_dra.app.container import NodeContainer
from npu_dra.app.options import Hardware, defaults
from npu_dra.app.services.uninstall import UNINSTALLING
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimName, ClaimUID, Namespace
from tests.support.kubelet import allocated_claim

NODE, NAMESPACE, DAEMONSET = "n-uninstall", "npu-dra", "npu-dra-kubeletplugin"
DRAIN_END_S = 10.0  # how long the test waits for the drain to end before it fails


class Node:
    def __init__(self, tmp_path: Path) -> None:
        description = tmp_path / "node.yaml"
        description.write_text("chip: 910B4\ncount: 8\n")
        self.cluster, self.daemonsets = MemoryCluster(), MemoryDaemonSets()
        settings = defaults(
            node_name=NODE,
            driver_name="npu.huawei.com",
            device_profile="npu",
            hardware=Hardware("fake", description),
            state="memory",
            cdi_root=tmp_path / "cdi",
            plugins_dir=tmp_path / "plugins",
            daemonset_name=DAEMONSET,
            pod_namespace=NAMESPACE,
        )
        self.container = NodeContainer(
            settings=providers.Object(settings),
            cluster=self.cluster,
            daemonset_watcher=self.daemonsets,
        )

    def claim(self, name: str, device: str) -> ClaimRef:
        made = self.cluster.create(allocated_claim(name, [device], namespace="ns", pool=NODE))
        return ClaimRef(Namespace("ns"), ClaimName(name), ClaimUID(made["metadata"]["uid"]))

    def prepare(self, ref: ClaimRef) -> str | None:
        return self.container.uninstall_gate().prepare([ref])[ref.uid].error


def test_uninstall_then_a_new_install_reopens_the_gate_and_ends_the_drain(tmp_path: Path) -> None:
    node = Node(tmp_path)
    node.daemonsets.apply(NAMESPACE, DAEMONSET)
    fate = node.container.uninstall_watch()
    assert fate is not None
    held = node.claim("held", "npu-0")
    assert node.prepare(held) is None
    node.daemonsets.delete(NAMESPACE, DAEMONSET)  # helm uninstall
    assert fate.uninstalling

    sigterm_again, ended = threading.Event(), []  # SIGTERM: the runner starts the drain
    drain = threading.Thread(
        target=lambda: ended.append(node.container.uninstall_drain().run(sigterm_again, fate))
    )
    drain.start()
    try:
        refused = node.claim("refused", "npu-1")
        assert node.prepare(refused) == UNINSTALLING
        node.daemonsets.apply(NAMESPACE, DAEMONSET)  # helm install, before the pod ended
        assert not fate.uninstalling
        drain.join(timeout=DRAIN_END_S)
        assert not drain.is_alive(), "still draining after the DaemonSet came back"
    finally:
        sigterm_again.set()
        drain.join()
    assert ended == [False]  # not uninstalled: stopping as on any other SIGTERM
    late = node.claim("late", "npu-2")
    assert node.prepare(late) is None, "the gate stayed closed"
    claims = node.container.checkpoint_store().load().claims
    assert set(claims) == {held.uid, late.uid}  # kept for the next instance
    assert node.container.cdi_store().claim_uids() == {held.uid, late.uid}
