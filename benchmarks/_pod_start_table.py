"""benchmarks/pod_start.py's table: per row and contender one value per round (that round's p50 or
p95, in ms), printed as min/median/max over the rounds, and with two contenders the ratio of
their medians (first / second)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

ONE, BURST = "one at a time", "4 at once"
STEP = "kubelet DRA step"  # benchmarks/_pod_start_spans.py
KINDS = (ONE, BURST, f"{STEP}, {ONE}", f"{STEP}, {BURST}")
WIDTH = 38


def p95(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


@dataclass
class Table:
    """kind -> "p50"/"p95" -> contender -> one value per round (ms)."""

    rows: dict[tuple[str, str], dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(dict)
    )

    def add(self, kind: str, label: str, seconds: Sequence[float]) -> None:
        """One round's samples of `kind` for `label` (nothing when there are none)."""
        if not seconds:
            return
        for name, value in (("p50", statistics.median(seconds)), ("p95", p95(seconds))):
            self.rows[kind, name].setdefault(label, []).append(value * 1000)

    def print(self, labels: Sequence[str]) -> None:
        ratio = len(labels) == 2
        head = "".join(f" {label + ' min/med/max':>24}" for label in labels)
        print(f"  {'(ms)':<{WIDTH}}{head}" + (f" {'ratio':>6}" if ratio else ""))
        for kind in KINDS:
            for name in ("p50", "p95"):
                by_label = self.rows.get((kind, name))
                if by_label:
                    print(_line(f"{kind} {name}", by_label, labels, ratio=ratio))


def _line(row: str, by_label: dict[str, list[float]], labels: Sequence[str], *, ratio: bool) -> str:
    cells = "".join(f" {_cell(by_label.get(label, [])):>24}" for label in labels)
    line = f"  {row:<{WIDTH}}{cells}"
    if ratio and all(by_label.get(label) for label in labels):
        ours, theirs = (statistics.median(by_label[label]) for label in labels)
        line += f" {ours / theirs:>6.2f}"
    return line


def _cell(values: Sequence[float]) -> str:
    if not values:
        return "n/a"
    return "/".join(f"{v:.0f}" for v in (min(values), statistics.median(values), max(values)))
