"""npu-smi's output is read up to a bound: bytes and lines of stdout, bytes of stderr, and the
length of what an error quotes; a child that keeps printing is killed, not read to the end."""

from pathlib import Path

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.bounded import (
    MAX_OUTPUT_BYTES,
    MAX_OUTPUT_LINES,
    STDERR_BYTES,
)
from npu_dra.adapters.hardware.npu_smi.runner import NpuSmiRunner


def script(tmp_path: Path, body: str) -> NpuSmiRunner:
    path = tmp_path / "npu-smi"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return NpuSmiRunner(path=path)


def test_output_over_the_byte_bound_is_an_error_and_the_writer_killed(tmp_path: Path) -> None:
    runner = script(tmp_path, "exec tr '\\0' v < /dev/zero")  # one endless line
    with pytest.raises(ProbeError) as raised:
        runner.run(("info",), timeout=60)
    assert str(raised.value) == (
        f"`npu-smi info`: more than {MAX_OUTPUT_BYTES // 2**20} MiB of output (killed): "
        "npu-smi's answers are kB"
    )


def test_output_over_the_line_bound_is_an_error(tmp_path: Path) -> None:
    runner = script(tmp_path, "exec yes")
    with pytest.raises(ProbeError, match=f"more than {MAX_OUTPUT_LINES} lines of output"):
        runner.run(("info", "-t", "topo"), timeout=60)


def test_output_at_the_bounds_is_read_whole(tmp_path: Path) -> None:
    runner = script(tmp_path, f"yes | head -n {MAX_OUTPUT_LINES}")
    assert runner.run(("info",), timeout=60) == "y\n" * MAX_OUTPUT_LINES


def test_a_flood_on_stderr_is_read_and_dropped_past_its_bound(tmp_path: Path) -> None:
    flood = "head -c 50000000 /dev/zero | tr '\\0' e >&2"  # 50 MB, far past STDERR_BYTES
    runner = script(tmp_path, f"{flood}; echo done; exit 3")
    with pytest.raises(ProbeError) as raised:
        runner.run(("info",), timeout=60)
    message = str(raised.value)
    assert message.startswith("`npu-smi info` exited with status 3: 'eeee")
    assert f"... ({STDERR_BYTES} characters)" in message
    assert len(message) < 300


def test_a_long_stdout_line_is_quoted_short_in_an_error(tmp_path: Path) -> None:
    runner = script(tmp_path, "head -c 1000000 /dev/zero | tr '\\0' x; exit 1")
    with pytest.raises(ProbeError, match=r"\.\.\. \(1000000 characters\)$") as raised:
        runner.run(("info",), timeout=60)
    assert len(str(raised.value)) < 300
