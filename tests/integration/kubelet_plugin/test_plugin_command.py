"""`npu-dra kubelet-plugin`: in-process through register(), and as the real CLI process."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from plugin_node import DRIVER, plugin_settings

from npu_dra.app.commands import kubelet_plugin
from npu_dra.app.commands import kubelet_plugin_runtime as runtime
from npu_dra.app.options import settings_from
from tests.support.kubelet import Kubelet, wait_for_registration_socket

NPU_DRA = Path(sys.executable).parent / "npu-dra"
ENV_VARS = (
    "NODE_NAME",
    "DEVICE_PROFILE",
    "DRIVER_NAME",
    "KUBELET_REGISTRAR_DIRECTORY_PATH",
    "KUBELET_PLUGINS_DIRECTORY_PATH",
    "CDI_ROOT",
    "HEALTHCHECK_PORT",
    "KUBECONFIG",
    "HARDWARE",
    "NPU_SMI_PATH",
    "LOG_LEVEL",
    "LOG_FORMAT",
)


@pytest.fixture(autouse=True)
def _no_plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


def _argv(scratch: Path, *extra: str) -> list[str]:
    settings = plugin_settings(scratch)
    return [
        "kubelet-plugin",
        "--node-name=node-1",
        f"--kubelet-registrar-directory-path={settings.registrar_dir}",
        f"--kubelet-plugins-directory-path={settings.plugins_dir}",
        f"--cdi-root={settings.cdi_root}",
        f"--hardware=fake:{scratch / 'node.yaml'}",
        "--cluster=memory",
        f"--api-lock-dir={settings.api_lock_dir}",
        *extra,
    ]


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="npu-dra")
    kubelet_plugin.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_register_adds_the_subcommand_with_its_runner(scratch: Path) -> None:
    args = _parse(_argv(scratch))

    assert args.func is kubelet_plugin.run
    assert settings_from(args) == plugin_settings(scratch)


def test_the_runtime_serves_until_stopped_then_leaves_no_sockets(scratch: Path) -> None:
    settings = settings_from(_parse(_argv(scratch)))
    stop = threading.Event()
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(runtime.run(settings, stop)))
    thread.start()
    try:
        with Kubelet(settings.registrar_dir).register() as dra:
            assert dra.prepare([]).claims == {}
    finally:
        stop.set()
        thread.join(30)

    assert codes == [0]
    assert list(settings.registrar_dir.iterdir()) == []
    assert not (settings.plugins_dir / DRIVER / "dra.sock").exists()


def test_a_missing_kubeconfig_is_a_clear_startup_error(
    scratch: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = scratch / "no-such-kubeconfig"
    settings = settings_from(
        _parse(_argv(scratch, "--cluster=kubernetes", f"--kubeconfig={missing}"))
    )

    assert runtime.run(settings, threading.Event()) == 1
    assert f"cannot configure the cluster API from {missing}" in caplog.text
    assert list(settings.registrar_dir.glob("*")) == []


def test_the_cli_process_registers_and_stops_cleanly_on_sigterm(scratch: Path) -> None:
    settings = plugin_settings(scratch)
    process = subprocess.Popen(
        [str(NPU_DRA), *_argv(scratch, "--log-format=json")],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_registration_socket(settings.registrar_dir, timeout_s=30)
        with Kubelet(settings.registrar_dir).register() as dra:
            assert dra.prepare([]).claims == {}
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()

    assert process.returncode == 0, stderr
    assert '"msg": "kubelet plugin stopped"' in stderr
    assert list(settings.registrar_dir.iterdir()) == []


def test_the_cli_exits_non_zero_naming_a_malformed_checkpoint(scratch: Path) -> None:
    checkpoint = plugin_settings(scratch).plugins_dir / DRIVER / "checkpoint.json"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_text("{damaged")

    done = subprocess.run(
        [str(NPU_DRA), *_argv(scratch)], check=False, capture_output=True, text=True, timeout=60
    )

    assert done.returncode == 1
    assert str(checkpoint) in done.stderr
    assert checkpoint.read_text() == "{damaged"
