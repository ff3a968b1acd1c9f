"""Files planted where a flag points: `--boot-id-file` and `--fault-codes`. A FIFO there (or any
file that is not a regular one) is refused without being opened for a blocking read, so it never
holds up the start, and the error names the flag.

Each blocking read is bounded here by a generous wait (30 s; an answer comes in milliseconds), so
that the code before the fix fails the test instead of hanging it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from npu_dra.adapters.boot_id import BootIds
from npu_dra.app.services.reboot import RebootCheck
from npu_dra.domain.errors import StateError

NPU_DRA = Path(sys.executable).with_name("npu-dra")
WAIT_S = 30.0


def fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def in_thread(call: Callable[[], object]) -> dict[str, object]:
    """What `call()` returned or raised, from a daemon thread given WAIT_S to finish."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except Exception as error:  # the outcome is what is asserted on
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(WAIT_S)
    assert not thread.is_alive(), "the read blocked on the FIFO"
    return outcome


def test_a_fifo_at_the_boot_id_file_is_refused_naming_the_flag(tmp_path: Path) -> None:
    boots = BootIds(fifo(tmp_path, "boot_id"), tmp_path / "data")
    error = in_thread(boots.current).get("error")
    assert isinstance(error, StateError), error
    assert "--boot-id-file" in str(error)
    assert "a FIFO" in str(error)
    assert "not a regular file" in str(error)


def test_a_fifo_at_the_boot_id_file_repairs_as_after_a_reboot(tmp_path: Path) -> None:
    check = RebootCheck(BootIds(fifo(tmp_path, "boot_id"), tmp_path / "data"))
    assert in_thread(check.new_boot) == {"value": True}


@pytest.mark.parametrize("name", ["boot_id", "device"])
def test_a_directory_or_device_at_the_boot_id_file_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name if name == "boot_id" else Path("/dev/null")
    if name == "boot_id":
        path.mkdir()
    error = in_thread(BootIds(path, tmp_path / "data").current).get("error")
    assert isinstance(error, StateError), error
    assert "--boot-id-file" in str(error)
    assert "not a regular file" in str(error)


def test_the_kernels_boot_id_is_still_read(tmp_path: Path) -> None:
    kernel = Path("/proc/sys/kernel/random/boot_id")
    assert BootIds(kernel, tmp_path).current() == kernel.read_text().strip().lower()


def npu_dra(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NPU_DRA), *argv], capture_output=True, text=True, timeout=WAIT_S, check=False
    )


@pytest.mark.parametrize("command", ["kubelet-plugin", "device-plugin"])
def test_a_fifo_at_fault_codes_stops_the_start_naming_the_flag(
    tmp_path: Path, command: str
) -> None:
    path = fifo(tmp_path, "faultCode.json")
    result = npu_dra(command, "--fault-codes", str(path), "--help")
    assert result.returncode == 2, result.stdout[-500:]
    assert "Traceback" not in result.stderr
    assert "argument --fault-codes" in result.stderr
    assert f"{path}: a FIFO, not a regular file" in result.stderr
