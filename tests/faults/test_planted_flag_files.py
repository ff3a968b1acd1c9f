"""Files planted where a flag points: `--boot-id-file` and `--fault-codes`. A FIFO there (or any
file that is not a regular one) is refused without being opened for a blocking read, so it never
holds up the start, and the error names the flag; a fault-code table nested deeper than its shape
(<level>Codes: [codes]) is refused naming the flag, the file and the line, never a traceback; a
code listed under two levels is taken at the more severe one with a warning that says so.

Each blocking read is bounded here by a generous wait (30 s; an answer comes in milliseconds), so
that the code before the fix fails the test instead of hanging it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from npu_dra.adapters.boot_id import BootIds
from npu_dra.app.options import Hardware, defaults
from npu_dra.app.options.node import fault_codes_file
from npu_dra.app.services.reboot import RebootCheck
from npu_dra.app.wiring.hardware import hardware_probe
from npu_dra.domain.errors import StateError
from npu_dra.domain.fault_codes import FaultLevel

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


def test_a_deeply_nested_fault_code_table_is_refused_naming_the_flag_and_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "faultCode.yaml"
    depth = 5000
    path.write_text(
        "NotHandleFaultCodes: ['80E21007']\nSeparateNPUCodes: " + "[" * depth + "]" * depth
    )
    result = npu_dra("device-plugin", "--fault-codes", str(path), "--help")
    assert result.returncode == 2, result.stdout[-500:]
    assert "Traceback" not in result.stderr
    assert "argument --fault-codes" in result.stderr
    assert f"{path}: line 2, column" in result.stderr
    assert "nested deeper than <level>Codes: [codes]" in result.stderr


@pytest.mark.parametrize(
    "text",
    [
        "SeparateNPUCodes: [['80E18402']]\n",
        "SeparateNPUCodes: [{code: '80E18402'}]\n",
        "SeparateNPUCodes: {codes: ['80E18402']}\n",
        "faults: {SeparateNPUCodes: ['80E18402']}\n",
    ],
)
def test_a_code_nested_where_a_table_has_none_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "faultCode.yaml"
    path.write_text(text)
    result = npu_dra("device-plugin", "--fault-codes", str(path), "--help")
    assert result.returncode == 2, result.stdout[-500:]
    assert "Traceback" not in result.stderr
    assert f"argument --fault-codes: {path}" in result.stderr


def test_a_code_under_two_levels_takes_the_more_severe_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "faultCode.yaml"
    path.write_text("NotHandleFaultCodes: ['80E18402']\nSeparateNPUCodes: ['80e18402']\n")
    table = fault_codes_file(str(path))
    assert table is not None
    assert table.level_of("80E18402") is FaultLevel.SEPARATE_NPU
    settings = defaults(node_name="node-a", hardware=Hardware("npu-smi"), fault_codes=table)
    with caplog.at_level(logging.WARNING):
        hardware_probe(settings)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        "80E18402" in w
        and "NotHandleFaultCodes" in w
        and "SeparateNPUCodes" in w
        and str(path) in w
        and "SeparateNPU applies" in w
        for w in warnings
    ), warnings
