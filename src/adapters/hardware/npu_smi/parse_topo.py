"""Reads `npu-smi info -t topo`: the link matrix between chips and each chip's CPU affinity.

From the matrix come topology groups: the chips joined by the node's fastest link. A 910B's
full HCCS mesh is one group, a 910 A+X server's two HCCS rings (0-3, 4-7) are two, an A3's SIO
pairs are eight. Groups are named `ring-<n>`, numbered by their lowest member. Rows are labelled
`NPU<n>` (n = the chip's logic id, the index npu-smi iterates) or, on A3, `Phy-ID<n>`
(n = physical id). NIC rows and columns of the newest npu-smi, and the legend, are skipped.
"""

import re
from collections.abc import Iterable, Mapping

import attrs

from npu_dra.adapters.hardware.npu_smi.lines import Line, bad_line, bad_output, is_noise, numbered
from npu_dra.adapters.hardware.npu_smi.runner import KNOWN_ANSWERS
from npu_dra.domain.vnpu.templates import shown

COMMAND = "npu-smi info -t topo"
LINKS = frozenset({"X", "SYS", "PHB", "HCCS", "PXB", "PIX", "SIO", "HCCS_SW", "UB", "NA"})
GROUPING_LINKS = ("SIO", "HCCS", "UB")  # fastest first; the first one present forms groups
_LABEL = re.compile(r"^(NPU|Phy-ID|NIC)(\d{1,9})$")  # ids far past any node's chips
_CPU_LIST = re.compile(r"^\d{1,5}(-\d{1,5})?(,\d{1,5}(-\d{1,5})?)*$")
AFFINITY = "CPU Affinity"
MAX_CPUS = 8192  # Linux's largest NR_CPUS (x86-64 with MAXSMP; arm64 allows 4096)


@attrs.frozen
class Topology:
    by: str  # "logic" for NPU<n> labels, "physical" for Phy-ID<n>
    links: Mapping[int, Mapping[int, str]]  # id -> other id -> link word
    affinity: Mapping[int, frozenset[int]]  # id -> CPUs; absent where npu-smi prints none


def parse_topo(output: str) -> Topology | None:
    """The topology, or None where npu-smi says the device does not support the query."""
    if any(answer in output for answer in KNOWN_ANSWERS):
        return None
    lines = list(_table_lines(numbered(output)))
    if not lines:
        raise bad_output(COMMAND, "empty output")
    header, rows = lines[0], lines[1:]
    columns, has_affinity = _header(header)
    chips = [c for c in columns if c[0] != "NIC"]
    chip_kind = chips[0][0]  # rows may say NPU<n> under Phy-ID<n> columns; n is what counts
    links: dict[int, dict[int, str]] = {}
    affinity: dict[int, frozenset[int]] = {}
    for line in rows:
        label, *cells = line.text.split()
        kind, number = _label(line, label)
        if kind == "NIC":
            continue
        if (chip_kind, number) not in chips or number in links:
            raise bad_line(COMMAND, line, f"{label} is not a column or repeats a row")
        row, cpus = _cells(line, cells, columns, has_affinity)
        if row[(chip_kind, number)] != "X":
            raise bad_line(COMMAND, line, f"{label} is not linked to itself with X")
        links[number] = {n: word for (k, n), word in row.items() if k != "NIC"}
        if cpus is not None:
            affinity[number] = cpus
    if len(links) != len(chips):
        raise bad_output(COMMAND, f"{len(chips)} columns but {len(links)} rows")
    return Topology("physical" if chip_kind == "Phy-ID" else "logic", links, affinity)


def _table_lines(lines: Iterable[Line]) -> Iterable[Line]:
    for line in lines:
        if line.text.strip() == "Legend:":
            return
        if not is_noise(line) and not re.match(r"^NIC\d+:", line.text.strip()):
            yield line


def _header(line: Line) -> tuple[list[tuple[str, int]], bool]:
    text = line.text.strip()
    has_affinity = text.endswith(AFFINITY)
    labels = text.removesuffix(AFFINITY).split()
    columns = [_label(line, label) for label in labels]
    chips = {kind for kind, _ in columns if kind != "NIC"}
    if len(chips) != 1 or len(set(columns)) != len(columns):
        raise bad_line(COMMAND, line, "expected a header of NPU<n> or Phy-ID<n> columns")
    return columns, has_affinity


def _label(line: Line, label: str) -> tuple[str, int]:
    match = _LABEL.match(label)
    if not match:
        raise bad_line(COMMAND, line, f"{shown(label)} is not an NPU<n> or Phy-ID<n> label")
    return match[1], int(match[2])


def _cells(
    line: Line, cells: list[str], columns: list[tuple[str, int]], has_affinity: bool
) -> tuple[dict[tuple[str, int], str], frozenset[int] | None]:
    if len(cells) != len(columns) + has_affinity:
        raise bad_line(COMMAND, line, f"expected {len(columns) + has_affinity} cells")
    unknown = [cell for cell in cells[: len(columns)] if cell not in LINKS]
    if unknown:
        raise bad_line(COMMAND, line, f"unknown link type {shown(unknown[0])}")
    cpus = parse_cpu_list(cells[-1]) if has_affinity else None
    if has_affinity and cpus is None and cells[-1] != "NA":
        raise bad_line(COMMAND, line, f"{shown(cells[-1])} is not a CPU list")
    return dict(zip(columns, cells, strict=False)), cpus


def parse_cpu_list(text: str) -> frozenset[int] | None:
    """`0-23,96-119` as a set of CPUs; None if `text` is not a Linux CPU list, or lists more than
    MAX_CPUS CPUs (counting repeats)."""
    text = text.strip()
    if not _CPU_LIST.match(text):
        return None
    cpus: set[int] = set()
    listed = 0
    for part in text.split(","):
        low, _, high = part.partition("-")
        span = range(int(low), int(high or low) + 1)
        listed += len(span)
        if not span or listed > MAX_CPUS:
            return None
        cpus.update(span)
    return frozenset(cpus)


def topology_groups(topology: Topology) -> dict[int, str]:
    """`ring-<n>` per chip id, joining chips by the fastest link type present; {} if none."""
    link = next((w for w in GROUPING_LINKS if _any_link(topology, w)), None)
    if link is None:
        return {}
    groups: dict[int, str] = {}
    for start in sorted(topology.links):
        if start not in groups:
            name = f"ring-{len(set(groups.values()))}"
            for member in _component(topology, start, link):
                groups[member] = name
    return groups


def _any_link(topology: Topology, word: str) -> bool:
    return any(word in row.values() for row in topology.links.values())


def _component(topology: Topology, start: int, link: str) -> set[int]:
    """Chips reachable from `start` over `link` (either direction counts)."""
    members, frontier = {start}, [start]
    while frontier:
        chip = frontier.pop()
        for other, row in topology.links.items():
            joined = row.get(chip) == link or topology.links[chip].get(other) == link
            if joined and other not in members:
                members.add(other)
                frontier.append(other)
    return members
