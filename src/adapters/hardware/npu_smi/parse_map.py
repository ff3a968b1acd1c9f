"""Reads `npu-smi info -m` (which chips exist and their ids) and `npu-smi info -l` (the cards).

`-m` is the authority on which chips exist: one row per chip, with the host-wide logic id CANN
uses and, on A3 and 950, the physical id. Management chips (the `Mcu` row, a `3559` companion
SoC) have no logic id (`-`) and are dropped. Columns are found by their header names, so the
A3 (`Chip Phy-ID`) and 950 (`Slot ID`, no logic id) variants need no special case.
"""

import re

import attrs

from npu_dra.adapters.hardware.npu_smi.lines import (
    Line,
    bad_line,
    bad_output,
    is_noise,
    numbered,
    parse_int,
)
from npu_dra.adapters.hardware.npu_smi.runner import NO_CARD

MAP_COMMAND = "npu-smi info -m"
LIST_COMMAND = "npu-smi info -l"
_COLUMNS = {
    "NPU ID": "card",
    "Slot ID": "slot",
    "Chip ID": "chip",
    "Chip Logic ID": "logic",
    "Chip Phy-ID": "physical",
    "Chip Name": "name",
}
_COLUMN = re.compile("|".join(sorted(map(re.escape, _COLUMNS), key=len, reverse=True)))
_MANAGEMENT = ("Mcu",)


@attrs.frozen
class MappedChip:
    card_id: int
    chip_id: int
    logic_id: int | None  # None on 950, whose map has no logic column
    physical_id: int | None  # None where the map has no Phy-ID column
    name: str  # "<chip type> <chip name>", e.g. "Ascend 910B4"
    line: Line


@attrs.frozen
class Card:
    card_id: int
    chip_count: int


def parse_map(output: str) -> tuple[MappedChip, ...]:
    lines = [line for line in numbered(output) if not is_noise(line)]
    if not lines:
        raise bad_output(MAP_COMMAND, "empty output")
    if len(lines) == 1 and lines[0].text.strip() == NO_CARD:
        return ()
    columns = _header(lines[0])
    chips = [chip for line in lines[1:] if (chip := _row(columns, line)) is not None]
    _reject_duplicates(chips)
    return tuple(chips)


def _header(line: Line) -> list[str]:
    text = line.text.strip()
    if _COLUMN.sub("", text).strip():
        raise bad_line(MAP_COMMAND, line, "expected the `NPU ID  Chip ID ...` header")
    columns = [_COLUMNS[name] for name in _COLUMN.findall(text)]
    needed = {"card", "chip", "name"}
    if not needed <= set(columns) or not {"logic", "physical"} & set(columns):
        raise bad_line(MAP_COMMAND, line, "header lacks NPU ID, Chip ID, a chip id or Chip Name")
    if columns[-1] != "name" or len(set(columns)) != len(columns):
        raise bad_line(MAP_COMMAND, line, "unexpected column order")
    return columns


def _row(columns: list[str], line: Line) -> MappedChip | None:
    fields = line.text.split(maxsplit=len(columns) - 1)
    if len(fields) != len(columns):
        raise bad_line(MAP_COMMAND, line, f"expected {len(columns)} columns")
    row = dict(zip(columns, fields, strict=True))
    if row.get("logic", row.get("physical")) == "-" or row["name"] in _MANAGEMENT:
        return None
    optional = {
        key: None if row.get(key, "-") == "-" else parse_int(MAP_COMMAND, line, row[key], key)
        for key in ("logic", "physical", "slot")
    }
    if "physical" in columns and optional["physical"] is None:
        raise bad_line(MAP_COMMAND, line, "chip without a Phy-ID")
    return MappedChip(
        card_id=parse_int(MAP_COMMAND, line, row["card"], "NPU id"),
        chip_id=parse_int(MAP_COMMAND, line, row["chip"], "chip id"),
        logic_id=optional["logic"],
        physical_id=optional["physical"],
        name=row["name"].strip(),
        line=line,
    )


def _reject_duplicates(chips: list[MappedChip]) -> None:
    seen: set[tuple[str, object]] = set()
    for chip in chips:
        ids = {
            "NPU id and chip id": (chip.card_id, chip.chip_id),
            "logic id": chip.logic_id,
            "Phy-ID": chip.physical_id,
        }
        for key in ((what, value) for what, value in ids.items() if value is not None):
            if key in seen:
                raise bad_line(MAP_COMMAND, chip.line, f"duplicate {key[0]}")
            seen.add(key)


def parse_card_list(output: str) -> tuple[Card, ...]:
    """`-l`: `Total Count : N` (`Card Count` on 310/310B), then `NPU ID`/`Chip Count` per card."""
    pairs = [(line, *_key_value(line)) for line in numbered(output) if not is_noise(line)]
    if not pairs:
        raise bad_output(LIST_COMMAND, "empty output")
    first, key, value = pairs[0]
    if key not in ("Total Count", "Card Count"):
        raise bad_line(LIST_COMMAND, first, "expected `Total Count : N` first")
    total = parse_int(LIST_COMMAND, first, value, key)
    cards: dict[int, int | None] = {}
    current: int | None = None
    for line, key, value in pairs[1:]:
        if key == "NPU ID":
            current = parse_int(LIST_COMMAND, line, value, key)
            if current in cards:
                raise bad_line(LIST_COMMAND, line, "duplicate NPU ID")
            cards[current] = None
        elif key == "Chip Count":
            if current is None or cards[current] is not None:
                raise bad_line(LIST_COMMAND, line, "Chip Count outside an NPU ID block")
            cards[current] = parse_int(LIST_COMMAND, line, value, key)
    complete = [Card(card, count) for card, count in cards.items() if count is not None]
    if len(cards) != total or len(complete) != total:
        raise bad_output(LIST_COMMAND, f"{total} cards announced, {len(complete)} complete")
    return tuple(complete)


def _key_value(line: Line) -> tuple[str, str]:
    key, colon, value = line.text.partition(":")
    if not colon:
        raise bad_line(LIST_COMMAND, line, "expected `key : value`")
    return key.strip(), value.strip()
