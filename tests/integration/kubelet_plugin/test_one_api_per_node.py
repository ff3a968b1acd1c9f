"""One API per node, as the real CLI processes meet it: while `npu-dra kubelet-plugin` serves a
node, `npu-dra device-plugin` on the same host directory refuses to start and names it, and
the other way round; each starts once the other is gone."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from plugin_node import plugin_settings

from tests.support.controlplane import wait_for
from tests.support.kubelet import wait_for_registration_socket

NPU_DRA = Path(sys.executable).parent / "npu-dra"


def dra_argv(scratch: Path) -> list[str]:
    settings = plugin_settings(scratch)
    return [
        str(NPU_DRA), "kubelet-plugin", "--node-name=node-1", "--cluster=memory",
        f"--kubelet-registrar-directory-path={settings.registrar_dir}",
        f"--kubelet-plugins-directory-path={settings.plugins_dir}",
        f"--cdi-root={settings.cdi_root}", f"--hardware=fake:{scratch / 'node.yaml'}",
        "--healthcheck-port=-1", f"--api-lock-dir={scratch / 'api-lock'}",
    ]  # fmt: skip


def classic_argv(scratch: Path) -> list[str]:
    (scratch / "device-plugins").mkdir(exist_ok=True)
    return [
        str(NPU_DRA), "device-plugin", "--node-name=node-1",
        f"--device-plugin-path={scratch / 'device-plugins'}",
        f"--hardware=fake:{scratch / 'node.yaml'}", f"--api-lock-dir={scratch / 'api-lock'}",
    ]  # fmt: skip


def refused(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def stopped(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)


def test_the_device_plugin_refuses_a_node_the_dra_plugin_serves(scratch: Path) -> None:
    settings = plugin_settings(scratch)
    dra = subprocess.Popen(dra_argv(scratch), stderr=subprocess.PIPE, text=True)
    try:
        wait_for_registration_socket(settings.registrar_dir, 30)
        answer = refused(classic_argv(scratch))
    finally:
        stopped(dra)
    assert answer.returncode == 1, answer.stderr
    assert "the DRA kubelet plugin serves this node's NPUs (node node-1" in answer.stderr
    assert "one API per node" in answer.stderr


def test_the_dra_plugin_refuses_a_node_the_device_plugin_serves(scratch: Path) -> None:
    plugin_settings(scratch)  # writes node.yaml
    classic = subprocess.Popen(classic_argv(scratch), stderr=subprocess.PIPE, text=True)
    try:
        lock = scratch / "api-lock" / "npu-device-plugin.owner"
        wait_for(lock.exists, timeout=30, what="the device plugin's lock")
        answer = refused(dra_argv(scratch))
    finally:
        stopped(classic)
    assert answer.returncode == 1, answer.stderr
    assert "the classic device plugin serves this node's NPUs" in answer.stderr
    again = subprocess.Popen(dra_argv(scratch), stderr=subprocess.PIPE, text=True)
    try:  # the device plugin has gone: the DRA plugin starts
        wait_for_registration_socket(plugin_settings(scratch).registrar_dir, 30)
    finally:
        stopped(again)
