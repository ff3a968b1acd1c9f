"""What an operator meets first, through the installed `npu-dra` command: names the API server
would refuse are refused when the flags are read, on every command that takes them; an empty node
name is an error; `--version` answers on stdout; a reader that closes the pipe early ends the
command quietly, without a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

NPU_DRA = Path(sys.executable).with_name("npu-dra")
DESCRIPTION = "chip: 910B4\ncount: 8\n"
# Every command and the flags it needs to get as far as reading --driver-name.
COMMANDS = ("kubelet-plugin", "device-plugin", "discover", "simulate")


def run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NPU_DRA), *argv], capture_output=True, text=True, timeout=60, env=env, check=False
    )


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", ["Bad_Name", "npu..huawei.com", "-npu.huawei.com", "a" * 64])
def test_a_driver_name_the_api_server_refuses_is_refused_by_every_command(
    command: str, name: str
) -> None:
    result = run(command, f"--driver-name={name}", "--unknown-flag-stops-here")
    assert result.returncode == 2
    assert "--driver-name" in result.stderr
    assert "driver name" in result.stderr
    assert repr(name)[:20] in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_driver_name_the_api_server_accepts_passes(command: str) -> None:
    result = run(command, "--driver-name=npu.example-1.com", "--help")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("command", ["kubelet-plugin", "device-plugin", "discover"])
def test_an_empty_node_name_is_an_error_naming_the_flag(command: str) -> None:
    result = run(command, "--node-name=", "--unknown-flag-stops-here")
    assert result.returncode == 2
    assert "--node-name" in result.stderr
    assert "must not be empty" in result.stderr


def test_an_empty_node_name_from_the_environment_is_an_error(tmp_path: Path) -> None:
    node = tmp_path / "node.yaml"
    node.write_text(DESCRIPTION)
    result = run("discover", f"--hardware=fake:{node}", env={"NODE_NAME": ""})
    assert result.returncode == 2
    assert "must not be empty" in result.stderr
    assert "NODE_NAME" in result.stderr


def test_a_node_name_with_capitals_is_refused_as_the_api_server_would() -> None:
    result = run("discover", "--node-name=Node_A", "--unknown-flag-stops-here")
    assert result.returncode == 2
    assert "DNS subdomain" in result.stderr


def test_a_resource_name_the_kubelet_refuses_is_refused_when_flags_are_read() -> None:
    result = run("device-plugin", "--resource-name=Ascend910=kubernetes.io/npu", "-x")
    assert result.returncode == 2
    assert "--resource-name" in result.stderr
    assert "kubernetes.io" in result.stderr


def test_version_answers_on_stdout() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("npu-dra ")
    assert result.stderr == ""


def test_a_reader_that_closes_the_pipe_early_gets_no_traceback(tmp_path: Path) -> None:
    node = tmp_path / "node.yaml"
    node.write_text("chip: 910B4\ncount: 1024\n")  # output well over a pipe's 64 kB buffer
    shell = f"'{NPU_DRA}' discover --node-name=n --hardware=fake:{node} -o table | head -1"
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", shell],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.stdout.count("\n") == 1
    assert "Traceback" not in result.stderr
    assert "BrokenPipe" not in result.stderr
    assert result.returncode in (0, 141)  # head's, or the shell's code for SIGPIPE
