"""`npu-dra device-plugin` as a process: configured from env vars, registered, ended by SIGTERM."""

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from npu_dra.app.commands import device_plugin as command
from tests.support.kubelet_dp import FakeKubelet

# The subcommand as the CLI mounts it: register(subparsers), then args.func(args).
DRIVER = """
import argparse, sys
from npu_dra.app.commands import device_plugin
parser = argparse.ArgumentParser(prog="npu-dra")
device_plugin.register(parser.add_subparsers(dest="command", required=True))
args = parser.parse_args(sys.argv[1:])
sys.exit(args.func(args))
"""


def run_command(*argv: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, "device-plugin", *argv],
        env=os.environ | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_the_command_serves_registers_and_exits_cleanly_on_sigterm(
    kubelet: FakeKubelet, short_dir: Path
) -> None:
    description = short_dir / "node.yaml"
    description.write_text("chip: 310P3\ncount: 2\n")
    env = {
        "NODE_NAME": "node-a",
        "DEVICE_PLUGIN_PATH": str(kubelet.dir),
        "HARDWARE": f"fake:{description}",
        "CDI_ENABLED": "true",
        "CDI_ROOT": str(short_dir / "cdi"),
        "LOG_LEVEL": "info",
        "API_LOCK_DIR": str(short_dir / "api-lock"),  # this fake node's, not the machine's
    }
    process = run_command("--health-interval", "1", env=env)
    try:
        (registration,) = kubelet.wait_for_registrations(1, timeout=60.0)
        assert registration.request.resource_name == "huawei.com/Ascend310P"
        assert (short_dir / "cdi" / "k8s.npu.huawei.com-npu.json").exists()
        with kubelet.plugin(registration.request.endpoint) as plugin:
            assert set(plugin.watch().next_list()) == {"npu-0", "npu-1"}
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert "registered huawei.com/Ascend310P" in output
    assert not (kubelet.dir / registration.request.endpoint).exists()


def test_hardware_that_cannot_be_probed_ends_the_command_with_a_reason(short_dir: Path) -> None:
    missing = short_dir / "missing.yaml"
    env = {
        "HARDWARE": f"fake:{missing}",
        "DEVICE_PLUGIN_PATH": str(short_dir),
        "API_LOCK_DIR": str(short_dir / "api-lock"),  # this fake node's, not the machine's
    }
    process = run_command(env=env)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 1
    assert f"cannot start the device plugin: {missing}" in output


def test_a_bad_flag_is_refused_before_anything_starts(capsys) -> None:
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["device-plugin", "--health-interval", "soon"])
    assert exited.value.code == 2
    assert "--health-interval" in capsys.readouterr().err
