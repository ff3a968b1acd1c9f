"""What a chip's error codes mean: Huawei's handling level of each code, as our health word.

Huawei's device plugin classifies every 8-hex-digit error code a chip reports into a handling
level and acts on the most severe one; the coarse npu-smi health word (OK/Warning/Alarm) is not
what it schedules by. Levels, their order and meanings: github.com/Ascend/mind-cluster @
22bb3d987bc0208c3eb7395e222b661276133c58, component/ascend-device-plugin/pkg/common/fault_code.go
(`getMostSeriousFaultType`) and docs/en/scheduling/references/common_operations.md
("faultLevelName"). Each level becomes the health word whose taint (device_taints.py) does what
the level asks of the cluster:

    level                meaning (Huawei)                          health     default taint
    NotHandleFault       no handling                               Degraded   none
    SubHealthFault       sub-health, per the job's strategy        Degraded   none
    RestartRequest       re-execute the request                    Unhealthy  NoSchedule
    RestartBusiness      re-execute the workload                   Unhealthy  NoSchedule
    FreeRestartNPU       reset the chip once it is idle            Unhealthy  NoSchedule
    PreSeparateNPU       no new jobs; running ones carry on        Unhealthy  NoSchedule
    RestartNPU           reset the chip now, re-execute the work   Critical   NoExecute
    SeparateNPU          isolate the chip                          Critical   NoExecute

A code the table does not know keeps the hardware's own health word (Huawei's plugin isolates
the chip unless DCMI calls the fault minor; npu-smi's word is the severity we have).
"""

import enum
import re
from collections.abc import Iterable, Mapping

import attrs

from npu_dra.domain.device import Health
from npu_dra.domain.errors import DomainError


class FaultLevel(enum.Enum):
    """Huawei's handling levels, least severe first."""

    NOT_HANDLE = "NotHandleFault"
    SUB_HEALTH = "SubHealthFault"
    RESTART_REQUEST = "RestartRequest"
    RESTART_BUSINESS = "RestartBusiness"
    FREE_RESTART_NPU = "FreeRestartNPU"
    RESTART_NPU = "RestartNPU"
    PRE_SEPARATE_NPU = "PreSeparateNPU"
    SEPARATE_NPU = "SeparateNPU"

    @property
    def severity(self) -> int:
        return _ORDER.index(self)


_ORDER = list(FaultLevel)
LEVEL_HEALTH: Mapping[FaultLevel, Health] = {
    FaultLevel.NOT_HANDLE: Health.DEGRADED,
    FaultLevel.SUB_HEALTH: Health.DEGRADED,
    FaultLevel.RESTART_REQUEST: Health.UNHEALTHY,
    FaultLevel.RESTART_BUSINESS: Health.UNHEALTHY,
    FaultLevel.FREE_RESTART_NPU: Health.UNHEALTHY,
    FaultLevel.PRE_SEPARATE_NPU: Health.UNHEALTHY,
    FaultLevel.RESTART_NPU: Health.CRITICAL,
    FaultLevel.SEPARATE_NPU: Health.CRITICAL,
}
# Health words from best to worst, to keep the worse of a code's and the hardware's word.
_WORSE = (Health.HEALTHY, Health.DEGRADED, Health.UNKNOWN, Health.UNHEALTHY, Health.CRITICAL)
CODE = re.compile(r"^[0-9A-Fa-f]{8}$")
MAX_CODES = 4096  # entries in one table: Huawei's has about 800


class FaultTableError(DomainError):
    """A fault-code table names an unknown level or holds a code that is not 8 hex digits."""


@attrs.frozen
class Classification:
    """A chip's health from its codes, and why (`SeparateNPU: 80E18402`; empty when none)."""

    health: Health
    reason: str = ""


@attrs.frozen
class FaultCodeTable:
    """Code (upper-case hex) -> handling level; `notes` says where the table listed a code
    under more than one level (for its reader to warn about)."""

    levels: Mapping[str, FaultLevel]
    notes: tuple[str, ...] = ()

    def level_of(self, code: str) -> FaultLevel | None:
        return self.levels.get(code.upper())

    def classify(self, codes: Iterable[str], *, reported: Health) -> Classification:
        """The most severe known code decides; unknown codes keep `reported` (the hardware's
        word). No codes at all: the hardware's word, unchanged."""
        codes = tuple(dict.fromkeys(c.upper() for c in codes))
        if not codes:
            return Classification(reported)
        known = [(level, c) for c in codes if (level := self.level_of(c)) is not None]
        unknown = [c for c in codes if self.level_of(c) is None]
        parts, health = [], Health.HEALTHY
        if known:
            level = max((lv for lv, _ in known), key=lambda lv: lv.severity)
            health = LEVEL_HEALTH[level]
            parts.append(f"{level.value}: {' '.join(c for lv, c in known if lv is level)}")
        if unknown:
            health = worse(health, reported)
            parts.append(f"unknown code {' '.join(unknown)} (hardware says {reported.value})")
        return Classification(health, "; ".join(parts))


def worse(a: Health, b: Health) -> Health:
    return max(a, b, key=_WORSE.index)


def fault_table(data: object, *, source: str) -> FaultCodeTable:
    """A table from Huawei's faultCode.json shape (`{"SeparateNPUCodes": ["80E18402", ...]}`,
    keys `<level>Codes`), as decoded from JSON or YAML. Errors name `source` and the bad key or
    entry. A code listed under two levels gets the more severe one, as Huawei's plugin takes it
    (its own table lists one so), and a note that says so: refusing it would refuse Huawei's."""
    if not isinstance(data, Mapping):
        raise FaultTableError(f"{source}: expected a mapping of <level>Codes to code lists")
    keys = {f"{level.value}Codes": level for level in FaultLevel}
    listed: dict[str, list[str]] = {}
    for key, codes in data.items():
        if key not in keys:
            known = ", ".join(sorted(keys))
            raise FaultTableError(f"{source}: {key!r} is not a fault level ({known})")
        for code in _codes(codes, key, source):
            listed.setdefault(code.upper(), []).append(key)
        if len(listed) > MAX_CODES:
            raise FaultTableError(f"{source}: more than {MAX_CODES} codes")
    levels = {c: max((keys[k] for k in ks), key=lambda lv: lv.severity) for c, ks in listed.items()}
    notes = tuple(
        f"{source}: code {code} is listed under {' and '.join(dict.fromkeys(ks))}: "
        f"{levels[code].value} applies, the more severe"
        for code, ks in listed.items()
        if len(set(ks)) > 1
    )
    return FaultCodeTable(levels, notes)


def _codes(codes: object, key: str, source: str) -> list[str]:
    """One level's codes; FaultTableError naming the entry that is not a code (nested, a
    number, ...) or for a list longer than a table holds codes."""
    if not isinstance(codes, list | tuple):
        raise FaultTableError(f"{source}: {key}: expected a list of codes")
    if len(codes) > MAX_CODES:
        raise FaultTableError(f"{source}: {key}: more than {MAX_CODES} codes")
    for index, code in enumerate(codes):
        if not isinstance(code, str) or not CODE.match(code):
            raise FaultTableError(
                f"{source}: {key}[{index}] = {_shown(code)} is not a fault code "
                "(8 hex digits, as a string: quote it in YAML)"
            )
    return list(codes)


def _shown(value: object) -> str:
    text = repr(value) if isinstance(value, str | int | float | bool) or value is None else ""
    return text[:40] if text else f"a {type(value).__name__}"


def built_in_table() -> FaultCodeTable:
    """Huawei's table as fault_code_table.py holds it."""
    from npu_dra.domain.fault_code_table import BUILT_IN

    data = {key: [c for line in lines for c in line.split()] for key, lines in BUILT_IN.items()}
    return fault_table(data, source="the built-in fault-code table")
