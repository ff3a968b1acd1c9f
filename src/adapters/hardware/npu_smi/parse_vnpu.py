"""Reads npu-smi's vNPU answers: `info -t template-info` and `info -t info-vnpu -i N -c C`.

template-info is a boxed table of line pairs per template: `Name AICORE Memory AICPU VPC VENC
JPEGD` on the first line, `PNGD VDEC JPEGE` on the second (ascend-facts A.7). info-vnpu shows
the chip's `Free/Total` per resource (`NA/NA` where not supported), then the vNPU list
`Vnpu ID | Vgroup ID | Container ID | Status | Template Name`. Anything else in a table row is
an error naming the line: a template or vNPU silently dropped would be worse than none. A
template's line pair that makes no template is such an error, but for that template only:
`read_templates` keeps the others and returns the errors, for the caller to report.
"""

import re

import attrs

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.lines import (
    MAX_DIGITS,
    Line,
    bad_line,
    bad_output,
    numbered,
)
from npu_dra.adapters.hardware.npu_smi.runner import KNOWN_ANSWERS
from npu_dra.domain.errors import DomainError
from npu_dra.domain.vnpu.instance import Vnpu
from npu_dra.domain.vnpu.templates import Template, shown

TEMPLATES_COMMAND = "npu-smi info -t template-info"
INFO_VNPU_COMMAND = "npu-smi info -t info-vnpu"
FIRST_LINE = ("aicore", "memory", "aicpu", "vpc", "venc", "jpegd")
SECOND_LINE = ("pngd", "vdec", "jpege")
RESOURCE_COLUMNS = ("aicore", "memory", "aicpu", "vpc", "venc", "vdec", "jpegd", "jpege", "pngd")
_BORDER = re.compile(r"^[+|][-=+|]+$")
_IN_USE_STATUS = "1"


@attrs.frozen
class ChipVnpus:
    totals: dict[str, int]  # the Total side of Free/Total; NA columns left out
    vnpus: tuple[Vnpu, ...]


@attrs.frozen
class TemplateReading:
    """The templates of a template-info answer, and the line pairs that made none (errors)."""

    templates: tuple[Template, ...]
    problems: tuple[ProbeError, ...] = ()


def parse_templates(output: str) -> tuple[Template, ...]:
    """Every template, or the first line pair that makes none as an error."""
    reading = read_templates(output)
    if reading.problems:
        raise reading.problems[0]
    return reading.templates


def read_templates(output: str) -> TemplateReading:
    """Each line pair's template; a pair that makes none (a bad number, a count npu-smi never
    prints...) is a problem and left out, the others kept. An answer whose table cannot be
    read at all (no header, a template's second line missing) is an error."""
    if any(answer in output for answer in KNOWN_ANSWERS):
        return TemplateReading(())
    rows = [(line, cells) for line, cells in _rows(output) if cells]
    header = next((i for i, (_, cells) in enumerate(rows) if cells[0] == "Name"), None)
    if header is None:
        raise bad_output(TEMPLATES_COMMAND, "no `Name AICORE ...` header")
    body = rows[header + 2 :]  # the header has a units line (GB, PNGD VDEC JPEGE)
    if len(body) % 2:
        raise bad_line(TEMPLATES_COMMAND, body[-1][0], "a template's second line is missing")
    templates, problems = [], []
    for i in range(0, len(body), 2):
        try:
            templates.append(_template(body[i], body[i + 1]))
        except ProbeError as error:
            problems.append(error)
    return TemplateReading(tuple(templates), tuple(problems))


def _template(first: tuple[Line, list[str]], second: tuple[Line, list[str]]) -> Template:
    (line, cells), (line2, cells2) = first, second
    if len(cells) != 1 + len(FIRST_LINE):
        raise bad_line(TEMPLATES_COMMAND, line, f"expected a name and {len(FIRST_LINE)} numbers")
    if len(cells2) != len(SECOND_LINE):
        raise bad_line(TEMPLATES_COMMAND, line2, f"expected {len(SECOND_LINE)} numbers")
    needs = {
        **{k: _int(TEMPLATES_COMMAND, line, v) for k, v in zip(FIRST_LINE, cells[1:], strict=True)},
        **{k: _int(TEMPLATES_COMMAND, line2, v) for k, v in zip(SECOND_LINE, cells2, strict=True)},
    }
    try:
        return Template(cells[0], needs)
    except DomainError as error:
        raise bad_line(TEMPLATES_COMMAND, line, str(error)) from error


def parse_info_vnpu(output: str) -> ChipVnpus:
    totals: dict[str, int] = {}
    vnpus: list[Vnpu] = []
    for line, cells in _rows(output):
        if len(cells) == len(RESOURCE_COLUMNS) and all("/" in c for c in cells):
            totals = _totals(line, cells)
        elif len(cells) == 5 and cells[0].isdigit():
            vnpus.append(_vnpu(line, cells))
    return ChipVnpus(totals, tuple(vnpus))


def _totals(line: Line, cells: list[str]) -> dict[str, int]:
    totals = {}
    for name, cell in zip(RESOURCE_COLUMNS, cells, strict=True):
        total = cell.partition("/")[2]
        if total != "NA":
            totals[name] = _int(INFO_VNPU_COMMAND, line, total)
    return totals


def _vnpu(line: Line, cells: list[str]) -> Vnpu:
    vnpu_id, vgroup, _container, status, template = cells
    return Vnpu(
        _int(INFO_VNPU_COMMAND, line, vnpu_id),
        template,
        _int(INFO_VNPU_COMMAND, line, vgroup),
        status == _IN_USE_STATUS,
    )


def _rows(output: str) -> list[tuple[Line, list[str]]]:
    """Each boxed line's words (cells split on `|` and blanks), borders left out."""
    rows = []
    for line in numbered(output):
        text = line.text.strip()
        if not text.startswith("|") or _BORDER.match(text):
            continue
        rows.append((line, text.replace("|", " ").split()))
    return rows


def _int(command: str, line: Line, text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise bad_line(command, line, f"{shown(text)} is not a number")
    if len(text) > MAX_DIGITS:
        raise bad_line(command, line, f"{shown(text)} has more than {MAX_DIGITS} digits")
    return int(text)
