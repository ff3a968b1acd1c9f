"""Which vNPU devices a chip that can be split publishes, and what each consumes.

Device names are `<chip>-<template>-<n>` with the template name made a DNS label
(`npu-0-vir05-1c-8g-2`); they are stable as long as the templates are, so an allocation made
before a restart still names the same vNPU device after it. An offer's templates make distinct
device names and at most MAX_VNPU_DEVICES_PER_CHIP devices (templates.py), so a chip's layout
fits the one slice it shares with the whole chip.
"""

from collections.abc import Mapping

import attrs

from npu_dra.domain.attributes import is_dns_label
from npu_dra.domain.errors import InventoryError
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.vnpu.templates import (
    AICORE,
    MEMORY,
    Template,
    VnpuOffer,
    shown,
    template_label,
)

TEMPLATE_ATTRIBUTE = "vnpuTemplate"
PARENT_ATTRIBUTE = "parentDevice"
_GI = 2**30


@attrs.frozen
class CounterSet:
    """A ResourceSlice `sharedCounters` entry."""

    name: str
    counters: Mapping[str, Quantity] = attrs.field(factory=dict)


@attrs.frozen
class CounterConsumption:
    """A device's `consumesCounters` entry."""

    counter_set: str
    counters: Mapping[str, Quantity] = attrs.field(factory=dict)


@attrs.frozen
class VnpuDevice:
    """One template placement on a chip, published as a device of its own (`<chip>-<template>-<n>`)
    that consumes the template's counters from the chip's counter set."""

    name: DeviceName
    parent: DeviceName
    template: Template
    index: int
    consumes: CounterConsumption

    def capacity(self) -> dict[str, Quantity]:
        """As a whole chip publishes them: its memory and AI cores, the template's share."""
        return {
            "memCapacity": Quantity.of_bytes(self.template.needs.get(MEMORY, 0) * _GI),
            "aiCores": Quantity.of_bytes(self.template.needs[AICORE]),
        }


@attrs.frozen
class ChipLayout:
    counter_set: CounterSet
    whole: CounterConsumption  # what the whole chip consumes: everything
    vnpu_devices: tuple[VnpuDevice, ...]  # one per template placement the chip holds

    def get(self, name: DeviceName) -> VnpuDevice | None:
        return next((p for p in self.vnpu_devices if p.name == name), None)


def counter_set_name(chip: DeviceName) -> str:
    return f"{chip}-counters"


def vnpu_device_name(chip: DeviceName, template: str, index: int) -> DeviceName:
    """`<chip>-<template>-<n>`; InventoryError if that is no DNS label (an odd template name)."""
    name = f"{chip}-{template_label(template)}-{index}"
    if not is_dns_label(name):
        raise InventoryError(
            f"template {shown(template)} on {chip}: {shown(name)} is not a DNS label"
        )
    return DeviceName(name)


def quantities(counts: Mapping[str, int]) -> dict[str, Quantity]:
    """Counters as published: memory in bytes (GB -> Gi), the rest as plain counts."""
    return {k: Quantity.of_bytes(v * _GI if k == MEMORY else v) for k, v in sorted(counts.items())}


def chip_layout(chip: DeviceName, vnpu_offer: VnpuOffer) -> ChipLayout:
    counter_set = CounterSet(counter_set_name(chip), quantities(vnpu_offer.counters()))
    vnpu_devices = tuple(
        VnpuDevice(
            vnpu_device_name(chip, t.name, i),
            chip,
            t,
            i,
            CounterConsumption(counter_set.name, quantities(t.consumed())),
        )
        for t in vnpu_offer.templates
        for i in range(vnpu_offer.placements(t))
    )
    return ChipLayout(
        counter_set, CounterConsumption(counter_set.name, counter_set.counters), vnpu_devices
    )


def find_vnpu_device(
    layouts: Mapping[DeviceName, ChipLayout], name: DeviceName
) -> VnpuDevice | None:
    return next((p for lay in layouts.values() if (p := lay.get(name)) is not None), None)
