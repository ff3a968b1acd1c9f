"""`npu-dra kubelet-plugin --hardware=dcmi` on a fake 910B4 node whose libdcmi.so is the C
stand-in, against a real API server: the fault-event e2e test and the fault-to-taint benchmark
share it.

The stand-in serves the same recorded host as the fake npu-smi (which still answers the HCCS
topology); its host file is named by DCMI_STUB_HOST, which the plugin inherits at spawn, so a
fault injected with `host.set_fault` reaches the running plugin. `subscribe=False` makes
dcmi_subscribe_fault_event answer -8255 (not supported): health is then polled.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.e2e.plugin_process import (
    DRIVER,
    FakeNode,
    PluginProcess,
    fake_node,
    spawn_plugin,
)
from tests.e2e.seed_cluster import access_applied, node_devices, pod_bound_kubeconfig
from tests.support.controlplane import ControlPlane, wait_for
from tests.support.dcmi_stub import StubHost, build_library

SEPARATE_NPU = 0x8C03A000  # faultCode.json: SeparateNPU -> Critical -> NoExecute


@dataclass
class DcmiNode:
    plane: ControlPlane
    node: FakeNode
    host: StubHost
    plugin: PluginProcess

    def devices(self) -> dict[str, dict[str, Any]]:
        return node_devices(self.plane, self.node.name)

    def taints(self, device: str) -> list[dict[str, Any]]:
        return list(self.devices().get(device, {}).get("taints") or [])


def argv(node: FakeNode, kubeconfig: Any, health_interval_s: float) -> list[str]:
    flags = node.argv(kubeconfig, health_interval_s=health_interval_s)
    flags.remove("--hardware=npu-smi")
    return [*flags, "--hardware=dcmi", f"--dcmi-dir={build_library().parent}"]


@contextlib.contextmanager
def dcmi_node(
    plane: ControlPlane, *, subscribe: bool = True, health_interval_s: float = 3600.0
) -> Iterator[DcmiNode]:
    name = f"dcmi-{uuid.uuid4().hex[:6]}"
    with contextlib.ExitStack() as stack:
        stack.enter_context(access_applied(plane))
        node = stack.enter_context(fake_node(name))
        host = StubHost.from_scenario("910B4_8npu", node.root / "dcmi-host")
        if not subscribe:
            host = host.variant("polled", subscribe_rc=-8255)
        plane.create_ready_node(name)
        stack.callback(plane.kubectl, "delete", "node", name, check=False)
        token = pod_bound_kubeconfig(plane, node)
        popen = spawn_plugin(argv(node, token, health_interval_s), node.log)
        plugin = PluginProcess(node, popen)
        stack.callback(plugin.stop)
        found = DcmiNode(plane, node, host, plugin)
        try:
            wait_for(lambda: len(found.devices()) == 8, timeout=60, what=f"8 NPUs of {name}")
        except TimeoutError as error:
            raise AssertionError(f"{error}\n--- plugin log:\n{plugin.tail()}") from None
        yield found


__all__ = ["DRIVER", "SEPARATE_NPU", "DcmiNode", "dcmi_node"]
