"""NpuConfig v1alpha1: this driver's opaque configuration (`config[].opaque.parameters` of a
DeviceClass, a ResourceClaim or its template, copied by the scheduler into the allocation).

Decoded strictly, by an explicit walk rather than cattrs: the checks run in the order, and say
the words, of the admission policy that refuses a bad one at create
(deploy/manifests/37-npuconfig-policy.yaml), so a config gets the same message from the API
server, from `simulate` and from a prepare on the node. Which entry applies to a result is
resolved here too; prepare then holds each result to its entry's sharing strategy.
"""

import enum
import json
from collections.abc import Sequence
from typing import Any

import attrs

from npu_dra.domain.chip_sharing.policy import share_of
from npu_dra.domain.claims import AllocationResult, ConfigSource, OpaqueConfig, ResourceClaim
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DriverName, RequestName

API_VERSION = "npu.huawei.com/v1alpha1"
KIND = "NpuConfig"
# OpaqueParametersMaxLength (k8s.io/api resource/v1 types.go): the API server's own limit.
MAX_DEPTH = 32  # an NpuConfig is 2 levels deep; room for fields to come
MAX_PARAMETERS_BYTES = 10 * 1024
_SHOWN = 64  # characters of a user's key or value repeated in a message
_TOP_FIELDS = "NpuConfig has apiVersion, kind and sharing"


class SharingStrategy(enum.Enum):
    EXCLUSIVE = "Exclusive"  # a whole chip, held by the claim alone
    SHARED = "Shared"  # a share of a shared chip


@attrs.frozen
class NpuConfig:
    """`sharing` None: whatever the scheduler allocated is used."""

    sharing: SharingStrategy | None = None


class ConfigError(DomainError):
    """An NpuConfig that does not decode, or a result its config does not allow. The message
    names where (`at`: the claim and the entry, where known), the field and what is wrong."""

    def __init__(self, field: str, reason: str, *, at: str = KIND) -> None:
        super().__init__(f"{at} field {field}: {reason}" if field else f"{at}: {reason}")
        self.field, self.reason, self.at = field, reason, at

    def located(self, at: str) -> "ConfigError":
        return ConfigError(self.field, self.reason, at=at)


def decode(parameters: str) -> NpuConfig:
    """The NpuConfig in `parameters` (JSON text); ConfigError naming the first bad field."""
    if len(parameters.encode()) > MAX_PARAMETERS_BYTES:
        raise ConfigError("", f"parameters larger than {MAX_PARAMETERS_BYTES} bytes")
    if _depth(parameters) > MAX_DEPTH:  # counted, not left to the recursion limit of the day
        raise ConfigError("", "parameters nested deeper than an NpuConfig can be")
    try:
        found = json.loads(parameters)
    except RecursionError:
        raise ConfigError("", "parameters nested deeper than an NpuConfig can be") from None
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise ConfigError("", "parameters are not a JSON object")
    _need_exactly(found, "apiVersion", API_VERSION)
    _need_exactly(found, "kind", KIND)
    _no_unknown(found, ("apiVersion", "kind", "sharing"), "", _TOP_FIELDS)
    if "sharing" not in found:
        return NpuConfig()
    sharing = found["sharing"]
    if not isinstance(sharing, dict):
        raise ConfigError("sharing", "must be an object with strategy Exclusive or Shared")
    _no_unknown(sharing, ("strategy",), "sharing.", "sharing has strategy only")
    return NpuConfig(_strategy(sharing))


def _need_exactly(found: dict[str, Any], key: str, value: str) -> None:
    if key not in found:
        raise ConfigError(key, f"required, {value}")
    if not isinstance(found[key], str):
        raise ConfigError(key, f"must be the string {value}")
    if found[key] != value:
        raise ConfigError(key, f"{_shown(found[key])} is not {value}")


def _no_unknown(found: dict[str, Any], known: tuple[str, ...], prefix: str, has: str) -> None:
    """The smallest unknown key is named, as the policy names it (CEL's map order varies)."""
    unknown = sorted(k for k in found if k not in known)
    if unknown:
        raise ConfigError(prefix + unknown[0][:_SHOWN], f"unknown field ({has})")


def _strategy(sharing: dict[str, Any]) -> SharingStrategy:
    field = "sharing.strategy"
    if "strategy" not in sharing:
        raise ConfigError(field, "required, Exclusive or Shared")
    value = sharing["strategy"]
    if not isinstance(value, str):
        raise ConfigError(field, "must be the string Exclusive or Shared")
    try:
        return SharingStrategy(value)
    except ValueError:
        raise ConfigError(field, f"{_shown(value)} is not Exclusive or Shared") from None


def _shown(value: str) -> str:
    return json.dumps(value[:_SHOWN] + ("..." if len(value) > _SHOWN else ""))


def entry_label(index: int, config: OpaqueConfig) -> str:
    return f"config[{index}] ({config.source.value})"


def entry_for(
    request: RequestName, configs: Sequence[OpaqueConfig], driver: DriverName
) -> int | None:
    """The index of the entry that applies to a result of `request` ("r" or "r/sub"), None
    where none does. Of `driver`'s entries that apply (none named, or `r` or `r/sub` named),
    the most specific wins whole: class for all < class naming it < claim for all < claim
    naming it; of two alike, the later (as kubernetes-sigs/dra-example-driver walks them)."""
    best: tuple[int, int] | None = None
    for index, config in enumerate(configs):
        rank = _rank(config, request, driver)
        if rank is not None and (best is None or rank >= best[0]):
            best = (rank, index)
    return None if best is None else best[1]


def _rank(config: OpaqueConfig, request: RequestName, driver: DriverName) -> int | None:
    if config.driver != driver:
        return None
    named = bool(config.requests)
    if named and not {request, request.split("/", 1)[0]} & set(config.requests):
        return None
    return (2 if config.source is ConfigSource.CLAIM else 0) + named


def config_for(
    request: RequestName, configs: Sequence[OpaqueConfig], driver: DriverName
) -> NpuConfig:
    """The NpuConfig for a result of `request`: the entry `entry_for` picks, decoded
    (ConfigError naming the entry), or the default where none applies."""
    index = entry_for(request, configs, driver)
    if index is None:
        return NpuConfig()
    try:
        return decode(configs[index].parameters)
    except ConfigError as error:
        raise error.located(entry_label(index, configs[index])) from None


def is_share(result: AllocationResult) -> bool:
    """A share of a shared chip: an allocation with a shareID, or a fixed share device."""
    return result.share_id is not None or share_of(result.device) is not None


def check_strategy(config: NpuConfig, result: AllocationResult, *, at: str = KIND) -> None:
    """ConfigError where `config`'s sharing strategy does not allow what `result` is."""
    field = "sharing.strategy"
    if config.sharing is SharingStrategy.EXCLUSIVE and is_share(result):
        what = f"shareID {result.share_id}" if result.share_id is not None else "a share device"
        why = "Exclusive needs a whole chip held by this claim alone; the scheduler allocated"
        raise ConfigError(field, f"{why} a share of one ({what})", at=at)
    if config.sharing is SharingStrategy.SHARED and not is_share(result):
        why = "Shared needs a share of a shared chip; the scheduler allocated a whole one"
        raise ConfigError(field, why, at=at)


def check_claim_configs(claim: ResourceClaim, driver: DriverName) -> None:
    """ConfigError, naming the claim, the entry and the field, for the first of `driver`'s
    entries in the claim's allocation that does not decode; then for the first of its results
    that the config applying to it does not allow. Other drivers' entries are not read."""
    if claim.allocation is None:
        return
    configs = claim.allocation.config
    decoded: dict[int, NpuConfig] = {}
    for index, config in enumerate(configs):
        if config.driver == driver:
            try:
                decoded[index] = decode(config.parameters)
            except ConfigError as error:
                raise error.located(f"claim {claim.ref}: {entry_label(index, config)}") from None
    for result in claim.results_for(driver):
        chosen = entry_for(result.request, configs, driver)
        if chosen is not None:
            where = f"claim {claim.ref}, request {result.request!r}, device {result.device!r}"
            at = f"{where}: {entry_label(chosen, configs[chosen])}"
            check_strategy(decoded[chosen], result, at=at)


def _depth(text: str) -> int:
    """The deepest nesting of JSON objects and arrays in `text` (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
