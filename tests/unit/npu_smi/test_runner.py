"""The npu-smi runner: argument lists, C locale, deadlines, and failures that name the command."""

import time
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.runner import NpuSmiRunner


def script(tmp_path: Path, body: str, name: str = "npu-smi") -> Path:
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_arguments_are_passed_as_a_list_in_the_c_locale(tmp_path: Path) -> None:
    body = 'echo "LANG=$LANG LC_ALL=$LC_ALL"; for a in "$@"; do echo "arg:$a"; done'
    runner = NpuSmiRunner(path=script(tmp_path, body))
    output = runner.run(("info", "-t", "a;b $(reboot)"), timeout=5)
    assert output.splitlines() == ["LANG=C LC_ALL=C", "arg:info", "arg:-t", "arg:a;b $(reboot)"]


def test_non_zero_exit_names_the_command_and_stderr(tmp_path: Path) -> None:
    runner = NpuSmiRunner(path=script(tmp_path, 'echo "dcmi init failed -8005" >&2; exit 3'))
    with pytest.raises(ProbeError) as raised:
        runner.run(("info", "-m"), timeout=5)
    assert str(raised.value) == "`npu-smi info -m` exited with status 3: dcmi init failed -8005"


def test_non_zero_exit_without_output(tmp_path: Path) -> None:
    runner = NpuSmiRunner(path=script(tmp_path, "exit 1"))
    with pytest.raises(ProbeError, match=r"^`npu-smi info` exited with status 1: no output$"):
        runner.run(("info",), timeout=5)


def test_no_card_answer_is_returned_even_with_a_non_zero_exit(tmp_path: Path) -> None:
    runner = NpuSmiRunner(
        path=script(tmp_path, 'echo "There is no NPU card on this server."; exit 2')
    )
    assert runner.run(("info",), timeout=5) == "There is no NPU card on this server.\n"


def test_missing_binary_names_the_command_and_path(tmp_path: Path) -> None:
    runner = NpuSmiRunner(path=tmp_path / "absent")
    with pytest.raises(ProbeError, match=r"^`npu-smi info`: cannot run .*absent: No such file"):
        runner.run(("info",), timeout=5)


def test_non_executable_binary_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "npu-smi"
    path.write_text("not a program")
    with pytest.raises(ProbeError, match="Permission denied"):
        NpuSmiRunner(path=path).run(("info",), timeout=5)


def test_a_hang_is_killed_with_its_children_at_the_deadline(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    runner = NpuSmiRunner(path=script(tmp_path, f"sleep 60 & echo $! > {pid_file}; wait"))
    started = time.monotonic()
    with pytest.raises(ProbeError, match=r"^`npu-smi info -t topo`: no answer within 0.5s"):
        runner.run(("info", "-t", "topo"), timeout=0.5)
    assert time.monotonic() - started < 2.5
    assert not _running(int(pid_file.read_text()))


def test_run_all_runs_commands_concurrently_and_keeps_their_order(tmp_path: Path) -> None:
    runner = NpuSmiRunner(path=script(tmp_path, 'sleep 0.5; echo "$@"'))
    started = time.monotonic()
    outputs = runner.run_all([("info",), ("info", "-m"), ("info", "-t", "topo")], timeout=5)
    assert outputs == ("info\n", "info -m\n", "info -t topo\n")
    assert time.monotonic() - started < 1.5  # run one after another they take at least 1.5 s


def test_run_all_raises_the_first_failure_in_command_order(tmp_path: Path) -> None:
    body = 'case "$*" in "info -m") exit 4;; "info -t topo") exit 5;; esac; echo ok'
    runner = NpuSmiRunner(path=script(tmp_path, body))
    with pytest.raises(ProbeError, match=r"^`npu-smi info -m` exited with status 4"):
        runner.run_all([("info",), ("info", "-m"), ("info", "-t", "topo")], timeout=5)


def _running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a container's init may not reap it)."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True
