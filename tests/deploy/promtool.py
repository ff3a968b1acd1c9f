"""promtool, Prometheus' own rule checker, built once per process from its Go module
(promtool/build.sh, cached outside the repository), for the chart's alert rules."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

BUILD_SCRIPT = Path(__file__).resolve().parent / "promtool" / "build.sh"
BUILD_TIMEOUT_S = float(os.environ.get("NPU_DRA_PROMTOOL_BUILD_TIMEOUT", "1800"))
_built: list[Path | str] = []


def build_promtool() -> Path | str:
    """The promtool binary, or why there is none."""
    if not _built:
        _built.append(_build())
    return _built[0]


def _build() -> Path | str:
    try:
        result = subprocess.run(
            ["bash", str(BUILD_SCRIPT)], capture_output=True, text=True,
            timeout=BUILD_TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"{BUILD_SCRIPT} ran over {BUILD_TIMEOUT_S:.0f}s"
    if result.returncode != 0:
        failed = f"building promtool failed ({BUILD_SCRIPT} exited {result.returncode})"
        return f"{failed}:\n{result.stderr}"
    binary = Path(result.stdout.strip().splitlines()[-1]) if result.stdout.strip() else Path()
    if not os.access(binary, os.X_OK):
        return f"{BUILD_SCRIPT} printed {binary!s}, which is not an executable"
    return binary
