"""One node's plugin started in-process on real unix sockets, with its cluster and kubelet.

Everything is real but the cluster (MemoryCluster) and the chips (FakeHardware): FileCdiStore
and FileCheckpointStore write into a temp dir, and tests assert on those files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.commands.kubelet_plugin_runtime import KubeletPlugin, build_container
from npu_dra.app.container import Container
from npu_dra.app.options import Hardware, Settings, defaults
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimName, ClaimUID, Namespace
from tests.support.kubelet import Kubelet, allocated_claim

NODE = "node-1"
DRIVER = "npu.huawei.com"
NODE_YAML = "chip: 910B4\ncount: 8\nhealth: {7: Critical}\n"


def plugin_settings(scratch: Path, **changes: Any) -> Settings:
    node_file = scratch / "node.yaml"
    if not node_file.exists():
        node_file.write_text(NODE_YAML)
    settings = defaults(
        node_name=NODE,
        driver_name=DRIVER,
        registrar_dir=scratch / "registry",
        plugins_dir=scratch / "plugins",
        cdi_root=scratch / "cdi",
        hardware=Hardware("fake", node_file),
        cluster="memory",
        api_lock_dir=scratch / "api-lock",  # this node's host directory, not the machine's
    )
    return settings.derive(**changes)


@attrs.define
class Node:
    """One node: its plugin process (in-process), the cluster it talks to, and its kubelet."""

    settings: Settings
    container: Container
    plugin: KubeletPlugin
    kubelet: Kubelet

    @property
    def cluster(self) -> MemoryCluster:
        return self.container.cluster()  # type: ignore[no-any-return]

    @property
    def hardware(self) -> FakeHardware:
        return self.container.node.hardware()  # type: ignore[no-any-return]

    @property
    def checkpoint_file(self) -> Path:
        return self.settings.plugins_dir / DRIVER / "checkpoint.json"

    @property
    def dra_socket(self) -> Path:
        return self.settings.plugins_dir / DRIVER / "dra.sock"

    @property
    def registration_socket(self) -> Path:
        return self.settings.registrar_dir / f"{DRIVER}-reg.sock"

    def claim(self, name: str, devices: list[str], **kw: Any) -> ClaimRef:
        """Create a claim allocated to `devices` (as the scheduler would) and return its ref."""
        return self.create(allocated_claim(name, devices, pool=NODE, driver=DRIVER, **kw))

    def create(self, claim: dict[str, Any]) -> ClaimRef:
        meta = self.cluster.create(claim)["metadata"]
        return ClaimRef(
            Namespace(meta["namespace"]), ClaimName(meta["name"]), ClaimUID(meta["uid"])
        )

    def cdi_spec(self, ref: ClaimRef) -> Path:
        return self.settings.cdi_root / f"k8s.{DRIVER}-npu_{ref.uid}.json"


def start_node(settings: Settings, cluster: MemoryCluster | None = None) -> Node:
    container = build_container(settings)
    if cluster is not None:
        container.cluster.override(cluster)
    plugin = KubeletPlugin(container)
    plugin.start()
    return Node(settings, container, plugin, Kubelet(settings.registrar_dir))
