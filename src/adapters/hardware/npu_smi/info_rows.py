"""The row pairs of the `npu-smi info` chip table, in each layout ascend-facts A.2 describes.

Every chip takes two table rows. Row 1 is `NPU Name | Health | Power Temp Hugepages`; what row 2
starts with depends on the family: the chip index (910/910B), chip index and Phy-ID (A3), chip
index and logic id (310/310P/310B), or nothing (950, whose NPU ID sits in its own column).
Cells are split on `|` and whitespace, never read at fixed offsets: widths changed across
versions and documentation copies hand-edit them.
"""

import re

import attrs

from npu_dra.adapters.hardware.health_words import health_of
from npu_dra.adapters.hardware.npu_smi.lines import Line, bad_line, parse_int
from npu_dra.domain.device import Health
from npu_dra.domain.vnpu.templates import shown

COMMAND = "npu-smi info"
_BUS_ID = re.compile(r"^[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")
_METRIC = re.compile(r"^(\d+(\.\d+)?|NA|-)$")
_NOT_A_VALUE = ("NA", "-")


@attrs.frozen
class Layout:
    """What the second header row says about the rows below it."""

    name: str
    chip_ids: tuple[str, ...]  # what row 2's first cell holds, in order
    merged_id_column: bool  # 950: `| NPU ID | Name |` are two cells
    hbm: bool  # the last cell ends with an `HBM-Usage(MB)` used/total pair

    @property
    def cells(self) -> int:
        return 4 if self.merged_id_column else 3


@attrs.frozen
class ChipHead:
    """Row 1 of a chip."""

    card_id: int
    name: str
    health: Health
    line: Line


@attrs.frozen
class InfoChip:
    """One chip as `npu-smi info` shows it; ids the layout does not print are None."""

    card_id: int
    chip_index: int
    name: str
    health: Health
    bus_id: str | None
    memory_mib: int | None  # HBM total on HBM parts, DDR total on 310-family parts
    logic_id: int | None
    physical_id: int | None
    line: Line


def layout_of(header: list[str], line: Line) -> Layout:
    hbm = bool(header) and "HBM-Usage(MB)" in header[-1]
    if len(header) == 4 and header[0] == header[1] == "":
        return Layout("950", (), merged_id_column=True, hbm=hbm)
    first = tuple(header[0].split()) if header else ()
    known = {("Chip",): ("910", ()), ("Chip", "Phy-ID"): ("A3", ("physical",))}
    known[("Chip", "Device")] = ("310", ("logic",))
    if len(header) != 3 or first not in known:
        raise bad_line(COMMAND, line, "unknown table layout (second header row)")
    name, ids = known[first]
    return Layout(name, ("chip", *ids), merged_id_column=False, hbm=hbm)


def chip_head(layout: Layout, cells: list[str], line: Line) -> ChipHead:
    ident, health_cell, metrics = _normalized(layout, cells, line)
    tokens = ident.split()
    if len(tokens) < 2:
        raise bad_line(COMMAND, line, "expected `NPU-id Name` in the first cell")
    health = health_of(health_cell)
    if health is None:
        raise bad_line(COMMAND, line, f"unknown health word {shown(health_cell)}")
    _values(metrics, 4, line)
    card_id = parse_int(COMMAND, line, tokens[0], "NPU id")
    return ChipHead(card_id, " ".join(tokens[1:]), health, line)


def chip_row(layout: Layout, head: ChipHead, cells: list[str], line: Line) -> InfoChip:
    ident, bus_cell, metrics = _normalized(layout, cells, line)
    tokens = ident.split()
    if len(tokens) != len(layout.chip_ids):
        wanted = " ".join(layout.chip_ids) or "nothing"
        raise bad_line(COMMAND, line, f"expected {wanted} in the first cell of a chip's row 2")
    ids = {
        key: parse_int(COMMAND, line, t, key)
        for key, t in zip(layout.chip_ids, tokens, strict=True)
    }
    if bus_cell != "NA" and not _BUS_ID.match(bus_cell):
        raise bad_line(COMMAND, line, f"{shown(bus_cell)} is not a PCI bus id")
    values = _values(metrics, 5 if layout.hbm else 3, line)
    total = values[-1] if layout.hbm else values[2]
    return InfoChip(
        card_id=head.card_id,
        chip_index=ids.get("chip", 0),
        name=head.name,
        health=head.health,
        bus_id=None if bus_cell == "NA" else bus_cell,
        memory_mib=_memory(total, line),
        logic_id=ids.get("logic"),
        physical_id=ids.get("physical"),
        line=head.line,
    )


def _normalized(layout: Layout, cells: list[str], line: Line) -> tuple[str, str, str]:
    if len(cells) != layout.cells:
        raise bad_line(COMMAND, line, f"expected {layout.cells} cells, found {len(cells)}")
    if layout.merged_id_column:
        return f"{cells[0]} {cells[1]}".strip(), cells[2], cells[3]
    return cells[0], cells[1], cells[2]


def _memory(total: str, line: Line) -> int | None:
    """MiB (npu-smi's "MB"); an absent or zero total means this reply does not say."""
    if total in _NOT_A_VALUE:
        return None
    return parse_int(COMMAND, line, total, "memory total") or None


def _values(metrics: str, count: int, line: Line) -> list[str]:
    """The cell's numbers with `used / total` pairs split; `NA` and `-` stand for no value."""
    values = metrics.replace("/", " ").split()
    if len(values) != count or not all(_METRIC.match(v) for v in values):
        raise bad_line(COMMAND, line, f"expected {count} numbers in {shown(metrics)}")
    return values
