"""Reads `npu-smi info`: which chips a node has, their names, health, bus ids and memory.

The output is a banner, a chip table and (usually) a process table. The parser walks it line by
line and accepts only what a table of the detected layout can contain; anything else (a stray
line, a row 1 without its row 2, an unknown health word, a duplicate chip) is a ProbeError
naming the line. Blank lines and `[WARNING]...` lines are ignored wherever they appear, and
"There is no NPU card on this server." alone means a node with no chips.
"""

import re
from collections.abc import Callable

import attrs

from npu_dra.adapters.hardware.npu_smi.info_rows import (
    COMMAND,
    ChipHead,
    InfoChip,
    Layout,
    chip_head,
    chip_row,
    layout_of,
)
from npu_dra.adapters.hardware.npu_smi.lines import Line, bad_line, bad_output, is_noise, numbered
from npu_dra.adapters.hardware.npu_smi.runner import NO_CARD

_BORDER = re.compile(r"^\+[-=+]*\+$")
_IDLE = re.compile(r"^No running processes found in NPU \d+$")


@attrs.frozen
class InfoReport:
    layout: Layout | None  # None when npu-smi reported no card
    chips: tuple[InfoChip, ...]


def parse_info(output: str) -> InfoReport:
    parser = _Parser()
    for line in numbered(output):
        if not is_noise(line):
            parser.feed(line)
    return parser.finish()


def cells_of(line: Line) -> list[str] | None:
    """A table row's cells, or None if the line is not a `| ... |` row."""
    text = line.text.strip()
    if len(text) < 2 or text[0] != "|" or text[-1] != "|":
        return None
    return [cell.strip() for cell in text[1:-1].split("|")]


class _Parser:
    """One pass over the lines: banner, two header rows, chip row pairs, process table."""

    def __init__(self) -> None:
        self._state = self._on_banner
        self._layout: Layout | None = None
        self._head: ChipHead | None = None
        self._chips: list[InfoChip] = []
        self._no_card = False
        self._last: Line | None = None

    def feed(self, line: Line) -> None:
        self._last = line
        if self._state == self._on_banner and line.text.strip() == NO_CARD:
            self._no_card = True
            return
        cells = cells_of(line)
        if cells is None and not _BORDER.match(line.text.strip()):
            raise bad_line(COMMAND, line, "not part of the npu-smi info tables")
        if self._no_card:
            raise bad_line(COMMAND, line, f"table after {NO_CARD!r}")
        self._state(line, cells)

    def finish(self) -> InfoReport:
        if self._no_card:
            return InfoReport(None, ())
        if self._head is not None:
            raise bad_line(COMMAND, self._head.line, "chip row without its second row")
        if self._layout is None or not self._chips:
            where = f"ends at line {self._last.number}" if self._last else "is empty"
            raise bad_output(COMMAND, f"no chip table: the output {where}")
        _reject_duplicates(self._chips)
        return InfoReport(self._layout, tuple(self._chips))

    def _on_banner(self, line: Line, cells: list[str] | None) -> None:
        if cells is None or (len(cells) == 1 and cells[0].startswith("npu-smi ")):
            return
        if not cells[0].startswith("NPU") or "Health" not in cells:
            raise bad_line(COMMAND, line, "expected the chip table header")
        self._state = self._on_header

    def _on_header(self, line: Line, cells: list[str] | None) -> None:
        if cells is None:
            raise bad_line(COMMAND, line, "expected the second header row")
        self._layout = layout_of(cells, line)
        self._state = self._on_chip_rows

    def _on_chip_rows(self, line: Line, cells: list[str] | None) -> None:
        assert self._layout is not None
        if cells is None:
            if self._head is not None:
                raise bad_line(COMMAND, self._head.line, "chip row without its second row")
        elif "Process id" in cells and self._head is None:
            self._state = self._on_processes
        elif self._head is None:
            self._head = chip_head(self._layout, cells, line)
        else:
            self._chips.append(chip_row(self._layout, self._head, cells, line))
            self._head = None

    def _on_processes(self, line: Line, cells: list[str] | None) -> None:
        if cells is None or (len(cells) == 1 and _IDLE.match(cells[0])):
            return
        numbers = [*cells[0].split(), cells[1]] if len(cells) == 4 else []
        if not numbers or not all(n.isascii() and n.isdigit() for n in numbers):
            raise bad_line(COMMAND, line, "not a process table row")


def _reject_duplicates(chips: list[InfoChip]) -> None:
    """The later of two chips with the same id is named: the earlier one parsed fine."""
    keys: dict[str, Callable[[InfoChip], object]] = {
        "NPU id and chip": lambda c: (c.card_id, c.chip_index),
        "logic id": lambda c: c.logic_id,
        "Phy-ID": lambda c: c.physical_id,
    }
    for what, key in keys.items():
        seen: set[object] = set()
        for chip in chips:
            value = key(chip)
            if value is not None and value in seen:
                raise bad_line(COMMAND, chip.line, f"duplicate {what}")
            seen.add(value)
