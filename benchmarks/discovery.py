"""How long NpuSmiProbe takes to discover a node when every npu-smi call is slow.

npu-smi talks to each chip's firmware and commonly takes 100-200 ms a call, so discovery time
is dominated by how many calls run one after another. The fake npu-smi here sleeps 150 ms per
call; the probe makes three calls (`info`, `info -m`, `info -t topo`) concurrently, so a node
should be discovered in about one call's time whatever its chip count (target: < 1 s for 16).

Run from the repository root: `python -m benchmarks.discovery`.
"""

import statistics
import tempfile
import time
from pathlib import Path

from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.adapters.hardware.npu_smi.replay import write_launcher
from npu_dra.domain.ids import NodeName

DELAY_S = 0.15
CALLS = 3
CHIP_COUNTS = (8, 16)
ROUNDS = 5
TARGET_S = 1.0
BORDER = "+" + "=" * 27 + "+" + "=" * 15 + "+" + "=" * 52 + "+"


def _info(chips: int) -> str:
    lines = [
        f"| {'NPU   Name':<26}| {'Health':<14}| {'Power(W)  Temp(C)  Hugepages-Usage(page)':<51}|",
        f"| {'Chip':<26}| {'Bus-Id':<14}| {'AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)':<51}|",
        BORDER,
    ]
    for n in range(chips):
        lines += [
            f"| {n:<6}{'910B3':<20}| {'OK':<14}| {'95.0':<12}{40:<18}{'0    / 0':<21}|",
            f"| {0:<26}| 0000:{n + 1:02X}:00.0  | {0:<12}{'0    / 0':<18}{'3314 / 65536':<21}|",
            BORDER,
        ]
    return "\n".join(lines) + "\n"


def _map(chips: int) -> str:
    columns = ("NPU ID", "Chip ID", "Chip Logic ID", "Chip Name")
    rows = [columns] + [(str(n), "0", str(n), "Ascend 910B3") for n in range(chips)]
    return "".join("\t" + "".join(f"{cell:<31}" for cell in row).rstrip() + "\n" for row in rows)


def _topo(chips: int) -> str:
    header = "\t   " + "".join(f"NPU{n:<8}" for n in range(chips)) + "CPU Affinity\n"
    rows = [
        f"NPU{n:<8}"
        + "".join(f"{'X' if m == n else 'HCCS':<11}" for m in range(chips))
        + f"{n // 2 * 24}-{n // 2 * 24 + 23}\n"
        for n in range(chips)
    ]
    return header + "".join(rows)


def _node(root: Path, chips: int) -> NpuSmiProbe:
    answers = root / "answers"
    answers.mkdir()
    (answers / "info.txt").write_text(_info(chips))
    (answers / "info_-m.txt").write_text(_map(chips))
    (answers / "info_-t_topo.txt").write_text(_topo(chips))
    dev = root / "dev"
    dev.mkdir()
    for n in range(chips):
        (dev / f"davinci{n}").touch()
    env = {"FAKE_NPU_SMI_DIR": str(answers), "FAKE_NPU_SMI_DELAY": str(DELAY_S)}
    npu_smi = write_launcher(root / "npu-smi", env=env)
    return NpuSmiProbe(node=NodeName("bench"), npu_smi=npu_smi, sysfs_root=root, dev_root=dev)


def _timings(probe: NpuSmiProbe, chips: int) -> list[float]:
    timings = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        found = len(probe.probe().devices)
        timings.append(time.perf_counter() - started)
        assert found == chips, f"discovered {found} of {chips} chips"
    return timings


def main() -> None:
    print(f"NpuSmiProbe discovery, fake npu-smi sleeping {DELAY_S * 1000:.0f} ms per call")
    print(
        f"({CALLS} calls per probe; run one after another they would take {CALLS * DELAY_S:.2f} s)"
    )
    for chips in CHIP_COUNTS:
        with tempfile.TemporaryDirectory() as root:
            timings = _timings(_node(Path(root), chips), chips)
        median, worst = statistics.median(timings), max(timings)
        verdict = "ok" if worst < TARGET_S else "OVER TARGET"
        print(
            f"  {chips:2d} chips: median {median:.3f} s, best {min(timings):.3f} s, "
            f"worst {worst:.3f} s over {ROUNDS} probes  [target < {TARGET_S:.0f} s: {verdict}]"
        )


if __name__ == "__main__":
    main()
