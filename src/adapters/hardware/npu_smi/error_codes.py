"""A faulted chip's error codes (`npu-smi info -t health -i N -c C`), classified into its health.

The `info` table gives only the chip's health word; Huawei's fault handling is decided per error
code (domain/fault_codes.py). For every chip whose word is not OK, one more call reads its codes:
the shape is ascend-facts A.3 and the recorded sample in tests/fixtures/npu-smi/
npu-smi-info-t-health_910A_alarm.txt (github.com/Ascend/mind-cluster @ 22bb3d98,
component/ascend-faultdiag/test/st_module_testcase/kg_parse/npu_info_after.txt):

    Health Status                  : Alarm
    Error Code                     : A4025021 8C03A000 8C084E00

`NA` means no code. A chip reports at most MAX_CODES codes; a token that is not 8 hex digits is
dropped and logged once. A health call that fails leaves the chip its health word (logged once):
the codes refine the word, they never make a probe fail.
"""

import logging
import re
from collections.abc import Callable, Collection, Iterable

import attrs

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.domain.device import Device, Health
from npu_dra.domain.fault_codes import FaultCodeTable

log = logging.getLogger(__name__)
MAX_CODES = 32  # per chip; the recorded alarm shows 3
_KEY = re.compile(r"^\s*Error Code\s*:(.*)$")
_CODE = re.compile(r"^[0-9A-Fa-f]{8}$")
_NO_CODE = ("NA", "")
_REMEMBERED = 256  # distinct log lines kept to say each once

Run = Callable[[tuple[str, ...]], str]


@attrs.frozen
class ErrorCodes:
    codes: tuple[str, ...]
    dropped: tuple[str, ...] = ()  # tokens that were not codes, or past MAX_CODES


def parse_error_codes(text: str) -> ErrorCodes:
    """The codes on the `Error Code` line (upper-case, in order, without repeats)."""
    for line in text.splitlines():
        if match := _KEY.match(line):
            return _codes(match.group(1).split())
    return ErrorCodes(())


def _codes(tokens: list[str]) -> ErrorCodes:
    if len(tokens) == 1 and tokens[0] in _NO_CODE:
        return ErrorCodes(())
    good = list(dict.fromkeys(t.upper() for t in tokens if _CODE.match(t)))
    bad = [t[:16] for t in tokens if not _CODE.match(t)][:MAX_CODES]
    return ErrorCodes(tuple(good[:MAX_CODES]), tuple(bad + good[MAX_CODES:]))


def health_command(device: Device) -> tuple[str, ...]:
    return ("info", "-t", "health", "-i", str(device.card_id), "-c", str(device.chip_id))


class ErrorCodeReader:
    """Re-derives the health of chips that are not OK from their codes and `table`; says each
    dropped code and each failed call once (per distinct message), not on every probe."""

    def __init__(self, table: FaultCodeTable) -> None:
        self._table = table
        self._said: set[str] = set()

    def classified(
        self, devices: Iterable[Device], run: Run, *, with_node: Collection[int]
    ) -> tuple[Device, ...]:
        """`devices` with the health their codes give, for those not OK whose /dev/davinciN is
        in `with_node` (a chip without its device node stays Unhealthy, whatever its codes)."""
        return tuple(
            self._classify(d, run)
            if d.health is not Health.HEALTHY and d.physical_id in with_node
            else d
            for d in devices
        )

    def _classify(self, device: Device, run: Run) -> Device:
        command = health_command(device)
        try:
            found = parse_error_codes(run(command))
        except ProbeError as error:
            message = f"{device.name}: error codes unread, keeping {device.health.value}: {error}"
            self._say_once(f"unread {device.name}", message)
            return device
        self._said.discard(f"unread {device.name}")  # a later failure is news again
        if found.dropped:
            dropped = " ".join(found.dropped)
            message = (
                f"`npu-smi {' '.join(command)}`: dropped {dropped} "
                f"(not 8 hex digits, or more than {MAX_CODES} codes)"
            )
            self._say_once(f"dropped {device.name} {dropped}", message)
        verdict = self._table.classify(found.codes, reported=device.health)
        if verdict.reason:
            message = f"{device.name}: {verdict.health.value} ({verdict.reason})"
            self._say_once(message, message, info=True)
        return attrs.evolve(device, health=verdict.health, fault=verdict.reason)

    def _say_once(self, key: str, message: str, *, info: bool = False) -> None:
        """Log `message` unless what `key` names was said already (the set is bounded)."""
        if key in self._said:
            return
        if len(self._said) >= _REMEMBERED:
            self._said.clear()
        self._said.add(key)
        (log.info if info else log.warning)("%s", message)
