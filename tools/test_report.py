"""Where `make test`'s time went: the slowest tests across the tiers' junit files, each tier's
count and wall time, and one closing line for the whole suite.

Usage: python tools/test_report.py [--slowest N] JUNIT.xml ...
Exits 1 when a file is missing or unreadable (a tier that never wrote its results).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

OUTCOMES = ("failure", "error", "skipped")


@dataclass(frozen=True)
class Case:
    name: str
    seconds: float
    outcome: str


@dataclass(frozen=True)
class Tier:
    name: str
    seconds: float
    cases: tuple[Case, ...]


def read_tier(path: Path) -> Tier:
    root = ElementTree.parse(path).getroot()  # noqa: S314 - our own pytest's output
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    cases = tuple(read_case(case) for suite in suites for case in suite.iter("testcase"))
    seconds = sum(float(suite.get("time", "0")) for suite in suites)
    return Tier(path.stem, seconds, cases)


def read_case(element: ElementTree.Element) -> Case:
    outcome = next((tag for tag in OUTCOMES if element.find(tag) is not None), "passed")
    name = f"{element.get('classname', '')}::{element.get('name', '')}"
    return Case(name, float(element.get("time", "0")), outcome)


def count(cases: tuple[Case, ...], *outcomes: str) -> int:
    return sum(1 for case in cases if case.outcome in outcomes)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slowest", type=int, default=30, metavar="N")
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    try:
        tiers = [read_tier(path) for path in args.files]
    except (OSError, ElementTree.ParseError) as error:
        print(f"test_report: cannot read a tier's results: {error}", file=sys.stderr)
        return 1
    every = tuple(case for tier in tiers for case in tier.cases)
    print(f"\n{args.slowest} slowest tests (setup + call + teardown, s):")
    for case in sorted(every, key=lambda case: case.seconds, reverse=True)[: args.slowest]:
        print(f"  {case.seconds:8.2f}  {case.name}")
    for tier in tiers:
        print(f"tier {tier.name}: {len(tier.cases)} tests in {tier.seconds:.0f} s")
    passed, failed = count(every, "passed"), count(every, "failure", "error")
    print(f"suite: {passed} passed, {failed} failed, {count(every, 'skipped')} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
