"""Shared chips: several claims on one NPU (#31).

Where the API server serves consumable capacity (DRAConsumableCapacity, KEP-5075: beta and on
in 1.36, alpha in 1.34), a shared chip is published once with `allowMultipleAllocations` and its
capacities given request policies; each allocation of it carries a shareID and what it
consumed. Elsewhere a shared chip is published as `shares` fixed share devices named
`<chip>-share-<i>`, and the whole chip is not offered. Either way a shared chip offers no vNPUs.

The request policies obey the API server's checks (kubernetes v1.36.3
pkg/apis/resource/validation/validation.go, validateRequestPolicyRange): min <= value,
min <= default, min + step <= value, and default - min a multiple of step.
"""

import re
from collections.abc import Iterable, Mapping

import attrs

from npu_dra.domain.attributes import AttributeValue, is_dns_label
from npu_dra.domain.device_kinds import SHARE_TYPE, TYPE_ATTRIBUTE
from npu_dra.domain.errors import DomainError, InvalidName
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.published import CapacityRange, PublishedDevice, RequestPolicy
from npu_dra.domain.quantity import Quantity

SHARE_INFIX = "-share-"
MIN_SHARES, MAX_SHARES = 2, 100  # Huawei's device plugin: -shareDevCount 2-100
DEFAULT_SHARES = 4
ALL_CHIPS = "all"
MAX_NAMED_CHIPS = 256  # `--shared-chips` names at most this many chips
_SHARE = re.compile(r"^(?P<chip>.+)-share-(?P<index>0|[1-9][0-9]{0,2})\Z")

# Attributes a shared chip's devices add to the chip's own (qualified by the driver, as the
# others are when written).
SHARED_ATTRIBUTE = "shared"
SHARE_INDEX_ATTRIBUTE = "shareIndex"
SHARES_ATTRIBUTE = "shares"
AICORES = "aiCores"
_MI, _GI = 2**20, 2**30


class SharingSyntaxError(DomainError):
    """`--shared-chips` or `--chip-shares` (or a SimulatedNode's fields) that do not parse."""


WHOLE, FIXED, CONSUMABLE, WITHHELD = "whole", "fixed", "consumable", "withheld"


@attrs.frozen
class ChipForm:
    """How one chip is published: whole, as `shares` fixed share devices, once with consumable
    capacity, or not at all (withheld)."""

    kind: str
    shares: int = 0


@attrs.frozen
class SharingPolicy:
    """Which chips are shared (`chips` None: all), in how many fixed shares where consumable
    capacity is not served, and whether it is (`consumable`); `held`: the form of each chip
    whose prepared claims decide it instead, until they are released
    (domain/chip_sharing/held_forms.py)."""

    chips: frozenset[DeviceName] | None = None
    shares: int = DEFAULT_SHARES
    consumable: bool = False
    held: Mapping[DeviceName, ChipForm] = attrs.field(factory=dict, hash=False)

    def shares_chip(self, name: DeviceName) -> bool:
        return self.chips is None or name in self.chips

    def configured_form(self, name: DeviceName) -> ChipForm:
        """The form the flags and the API server give `name`, whatever is held of it."""
        if not self.shares_chip(name):
            return ChipForm(WHOLE)
        return ChipForm(CONSUMABLE) if self.consumable else ChipForm(FIXED, self.shares)

    def form_of(self, name: DeviceName) -> ChipForm:
        """The form `name` is published in: what is held of it decides, else the flags."""
        return self.held.get(name) or self.configured_form(name)

    def absent(self, names: Iterable[DeviceName]) -> frozenset[DeviceName]:
        """The chips it names that are not among `names` (a node's devices)."""
        return frozenset() if self.chips is None else self.chips - frozenset(names)


def share_device_name(chip: DeviceName, index: int) -> DeviceName:
    return DeviceName(f"{chip}{SHARE_INFIX}{index}")


def share_of(name: DeviceName) -> tuple[DeviceName, int] | None:
    """The chip and share index a fixed share device's name stands for; None for any other."""
    match = _SHARE.match(name)
    return None if match is None else (DeviceName(match["chip"]), int(match["index"]))


# -- the flags' (and a simulated node's) syntax -------------------------------------------------


def parse_shared_chips(text: str) -> frozenset[DeviceName] | None:
    """`--shared-chips`: "" (no chip; an empty set), "all" (None: every chip), or chip device
    names separated by commas ("npu-0,npu-3")."""
    stripped = text.strip()
    if stripped.lower() == ALL_CHIPS:
        return None
    names = [part.strip() for part in stripped.split(",")] if stripped else []
    if len(names) > MAX_NAMED_CHIPS:
        raise SharingSyntaxError(f"{len(names)} chips named: at most {MAX_NAMED_CHIPS}")
    for name in names:
        if not is_dns_label(name):
            raise SharingSyntaxError(
                f"{name[:80]!r} is not a chip's device name (a DNS label such as npu-0); "
                f"expected {ALL_CHIPS!r} or device names separated by commas"
            )
    return frozenset(DeviceName(name) for name in names)


def parse_chip_shares(text: str) -> int:
    """`--chip-shares`: fixed shares per shared chip, MIN_SHARES to MAX_SHARES."""
    try:
        count = int(text.strip())
    except ValueError:
        count = 0
    if not MIN_SHARES <= count <= MAX_SHARES:
        raise SharingSyntaxError(
            f"{text[:80]!r}: expected a whole number of shares per chip from {MIN_SHARES} to "
            f"{MAX_SHARES} (the range of Huawei's device plugin -shareDevCount)"
        )
    return count


# -- publishing -----------------------------------------------------------------------------


def published_forms(
    chip: PublishedDevice, form: ChipForm, *, memory: str
) -> tuple[PublishedDevice, ...]:
    """What a chip is published as in `form`: itself (whole), itself multi-allocatable
    (consumable), its fixed shares, or nothing (withheld). `memory` names the capacity holding
    its memory."""
    if form.kind == CONSUMABLE:
        return (multi_allocatable(chip, memory=memory),)
    if form.kind == FIXED:
        return fixed_shares(chip, form.shares, memory=memory)
    return (chip,) if form.kind == WHOLE else ()


def multi_allocatable(chip: PublishedDevice, *, memory: str) -> PublishedDevice:
    """The chip once, `shared: true`, several claims allowed. A request naming no memory
    takes all of it (whole-chip use, so it never lands beside a share); a share asks for whole
    GiB of memory and any number of AI cores (none by default)."""
    policies = {
        name: _all_by_default(value) if name == memory else _none_by_default(value)
        for name, value in chip.capacity.items()
    }
    return attrs.evolve(
        chip,
        attributes={**chip.attributes, SHARED_ATTRIBUTE: True},
        allow_multiple_allocations=True,
        request_policies=policies,
    )


def _all_by_default(value: Quantity) -> RequestPolicy:
    """Default: all of it, rounded down to whole GiB as the range's step requires (what is left,
    under 1 GiB, is below the smallest request, so no share fits beside it); requests from 1 GiB
    in steps of 1 GiB. Memory under 2 GiB has no room for one step: no range, all by default."""
    whole = int(value.value)
    if whole < 2 * _GI:
        return RequestPolicy(default=value)
    gib = Quantity.of_bytes(_GI)
    return RequestPolicy(
        default=Quantity.of_bytes(whole // _GI * _GI), valid_range=CapacityRange(gib, step=gib)
    )


def _none_by_default(value: Quantity) -> RequestPolicy:
    """Default: none of it; requests from 0 in steps of 1 where a step fits under the value."""
    zero = Quantity.of_bytes(0)
    step = Quantity.of_bytes(1) if value.value >= 1 else None
    return RequestPolicy(default=zero, valid_range=CapacityRange(zero, step=step))


def fixed_shares(chip: PublishedDevice, shares: int, *, memory: str) -> tuple[PublishedDevice, ...]:
    """`shares` devices `<chip>-share-<i>` in place of the chip: its attributes, `type: share`
    (domain/device_kinds), `shared`, `shareIndex` and `shares`, each with 1/shares of each
    capacity (memory in whole MiB)."""
    capacity = {
        name: _share_of(value, shares, whole_mib=name == memory)
        for name, value in chip.capacity.items()
    }
    devices = []
    for index in range(shares):
        name = share_device_name(chip.name, index)
        if not is_dns_label(name):
            raise InvalidName(f"share device {name!r} of chip {chip.name!r}: not a DNS label")
        extra: dict[str, AttributeValue] = {
            TYPE_ATTRIBUTE: SHARE_TYPE,
            SHARED_ATTRIBUTE: True,
            SHARE_INDEX_ATTRIBUTE: index,
            SHARES_ATTRIBUTE: shares,
        }
        devices.append(
            PublishedDevice(name, {**chip.attributes, **extra}, capacity, taints=chip.taints)
        )
    return tuple(devices)


def _share_of(value: Quantity, shares: int, *, whole_mib: bool) -> Quantity:
    each = int(value.value) // shares
    return Quantity.of_bytes(each // _MI * _MI if whole_mib else each)
