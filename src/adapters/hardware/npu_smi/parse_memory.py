"""Reads a card's memory size from `npu-smi info -t memory -i <card>` or `-t usages -i <card>`.

Only needed when `npu-smi info` shows no total for a chip. Both commands print `key : value`
lines, one block per chip closed by `Chip ID : <n>` (a reply without it is chip 0). HBM is the
chip's memory where it has any; 310-family chips have DDR only (ascend-facts A.5).
"""

from npu_dra.adapters.hardware.npu_smi.lines import Line, bad_line, is_noise, numbered, parse_int
from npu_dra.adapters.hardware.npu_smi.runner import KNOWN_ANSWERS

HBM_KEYS = ("HBM Capacity(MB)",)
DDR_KEYS = ("DDR Capacity(MB)", "Total DDR Capacity(MB)", "Memory Capacity(MB)")
NUMERIC_KEYS = (*HBM_KEYS, *DDR_KEYS, "NPU ID", "Chip ID")


def parse_memory(output: str, *, command: str) -> dict[int, int]:
    """MiB per chip id; chips whose memory is 0 or absent are left out (the reply does not say)."""
    if any(answer in output for answer in KNOWN_ANSWERS):
        return {}
    sizes: dict[int, int] = {}
    block: dict[str, int] = {}
    closed: set[int] = set()
    for line in numbered(output):
        if is_noise(line):
            continue
        key, value = _key_value(command, line)
        if key not in NUMERIC_KEYS:
            continue
        number = parse_int(command, line, value, key)
        if key != "Chip ID":
            block[key] = number
        elif number in closed:
            raise bad_line(command, line, "duplicate Chip ID")
        else:
            _record(sizes, block, number)
            closed.add(number)
            block = {}
    if block and not closed:
        _record(sizes, block, 0)
    return sizes


def _record(sizes: dict[int, int], block: dict[str, int], chip: int) -> None:
    size = next((block[k] for k in (*HBM_KEYS, *DDR_KEYS) if block.get(k)), 0)
    if size:
        sizes[chip] = size


def _key_value(command: str, line: Line) -> tuple[str, str]:
    key, colon, value = line.text.partition(":")
    if not colon:
        raise bad_line(command, line, "expected `key : value`")
    return key.strip(), value.strip()
