"""How fast `npu-dra --help` and `npu-dra simulate --help` answer (issue 12's target: < 0.3 s).

Each command runs as its own process, as a user types it: wall time and CPU (user + system) from
start to exit, ROUNDS times, beside a bare `python -c pass` (the interpreter's own start, which
no command can beat). The commands import what they run only when they run, so `--help` loads
argparse, attrs and the options module, not gRPC, the Kubernetes client or the CEL runtime.

Run from the repository root: `python -m benchmarks.cli_start`.
"""

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROUNDS = 15
TARGET_S = 0.3
NPU_DRA = Path(sys.executable).with_name("npu-dra")
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "npu-dra --help": [str(NPU_DRA), "--help"],
    "npu-dra simulate --help": [str(NPU_DRA), "simulate", "--help"],
    "npu-dra kubelet-plugin --help": [str(NPU_DRA), "kubelet-plugin", "--help"],
}


def _once(argv: list[str]) -> tuple[float, float]:
    """(wall s, child CPU s) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=os.environ)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    print(f"{'command':<32}{'wall p50':>10}{'wall min':>10}{'CPU p50':>10}  target")
    for name, argv in COMMANDS.items():
        runs = [_once(argv) for _ in range(ROUNDS)]
        walls = [wall for wall, _ in runs]
        cpus = [cpu for _, cpu in runs]
        p50 = statistics.median(walls)
        target = (
            ""
            if name.startswith("python")
            else f"< {TARGET_S} s: " + ("met" if p50 < TARGET_S else "MISSED")
        )
        print(
            f"{name:<32}{p50:>9.3f}s{min(walls):>9.3f}s{statistics.median(cpus):>9.3f}s  {target}"
        )


if __name__ == "__main__":
    main()
