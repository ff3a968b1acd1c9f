"""What a node publishes: its devices as ResourceSlice content, split into slices of <=128.

Each device's profile says which attributes and capacities it publishes (Ascend: the seed's
chipName, numaNode, physicalId, topologyGroup and memCapacity). Unusable devices are left out of
the pool so the scheduler can never hand them out, unless a taint policy is given (the API server
serves device taints): then they stay, tainted as `device_taints.py` says. A sharing policy
publishes the chips it shares as `sharing.py` says, and offers no vNPUs of them.
"""

from collections.abc import Mapping, Sequence

import attrs

from npu_dra.domain.attributes import check_attribute_value, check_qualified_name
from npu_dra.domain.chip_sharing.policy import WHOLE, SharingPolicy, published_forms
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.device_kinds import TYPE_ATTRIBUTE, VNPU_TYPE
from npu_dra.domain.device_taints import DeviceTaint, TaintPolicy
from npu_dra.domain.ids import DeviceName, DriverName, NodeName, PoolName
from npu_dra.domain.profile import profile_named
from npu_dra.domain.published import CapacityRange, PublishedDevice, RequestPolicy
from npu_dra.domain.published_attributes import PCI_BUS_ID
from npu_dra.domain.vnpu.layout import (
    PARENT_ATTRIBUTE,
    TEMPLATE_ATTRIBUTE,
    ChipLayout,
    CounterSet,
    chip_layout,
)

# kubernetes v1.36.3 pkg/apis/resource/validation/validation.go (validateResourceSliceSpec):
# 128 devices, 64 once a device has taints, consumesCounters or list attributes; a device with
# allowMultipleAllocations (a shared chip) lowers no limit.
MAX_DEVICES_PER_SLICE = 128
MAX_DEVICES_PER_SLICE_WITH_TAINTS = 64  # the API server's limit once any device has a taint
MAX_COUNTING_DEVICES_PER_SLICE = 64  # 1.35+: a slice with consumesCounters holds at most 64
MAX_COUNTER_SETS_PER_SLICE = 8  # 1.35+: sharedCounters per slice
__all__ = [
    "PCI_BUS_ID",
    "CapacityRange",
    "PoolRef",
    "PublishedDevice",
    "RequestPolicy",
    "ResourceSlice",
    "desired_slices",
]


@attrs.frozen
class PoolRef:
    name: PoolName
    generation: int
    resource_slice_count: int


@attrs.frozen
class ResourceSlice:
    """A ResourceSlice's spec (plus its API name once stored)."""

    driver: DriverName
    node_name: NodeName
    pool: PoolRef
    devices: tuple[PublishedDevice, ...]
    name: str | None = None
    shared_counters: tuple[CounterSet, ...] = ()


def published_device(device: Device, taints: tuple[DeviceTaint, ...] = ()) -> PublishedDevice:
    """The device as its profile publishes it; every name and value checked."""
    profile = profile_named(device.profile)
    attributes = profile.attributes(device)
    for key, value in attributes.items():
        check_attribute_value(check_qualified_name(key), value)
    return PublishedDevice(device.name, attributes, profile.capacity(device), taints=taints)


def pool_devices(
    inventory: NodeInventory,
    taints: TaintPolicy | None = None,
    sharing: SharingPolicy | None = None,
) -> tuple[PublishedDevice, ...]:
    """Usable devices, and with a taint policy the unusable ones it taints too (one it leaves
    untainted, e.g. Unknown=None, is left out as without taints: never offered bare); a chip
    the sharing policy shares as what it is shared as (its taints on each of its devices)."""
    published: list[PublishedDevice] = []
    for device in inventory.devices:
        tainted = taints.taints_of(device) if taints is not None else ()
        if not (device.health.usable or tainted):
            continue
        chip = published_device(device, tainted)
        if sharing is not None:
            memory = profile_named(device.profile).memory_capacity
            published.extend(published_forms(chip, sharing.form_of(device.name), memory=memory))
        else:
            published.append(chip)
    return tuple(published)


def chip_layouts(
    inventory: NodeInventory, sharing: SharingPolicy | None = None
) -> dict[DeviceName, ChipLayout]:
    """The vNPU layout of each usable chip the inventory says can be split and that is not
    shared, nor held in a form other than whole (sharing wins: a shared chip offers no vNPUs)."""
    return {
        d.name: chip_layout(d.name, inventory.vnpu_offers[d.name])
        for d in inventory.devices
        if d.health.usable
        and d.name in inventory.vnpu_offers
        and not (
            sharing is not None
            and (sharing.shares_chip(d.name) or sharing.form_of(d.name).kind != WHOLE)
        )
    }


def vnpu_published_devices(
    device: PublishedDevice, layout: ChipLayout
) -> tuple[PublishedDevice, ...]:
    """The whole chip consuming all its counters, then its vNPU devices: the chip's attributes
    (so selectors on NUMA node or chip name still work), `type: vnpu` (domain/device_kinds),
    the template and the parent."""
    whole = attrs.evolve(device, consumes_counters=(layout.whole,))
    parts = tuple(
        PublishedDevice(
            p.name,
            {
                **device.attributes,
                TYPE_ATTRIBUTE: VNPU_TYPE,
                TEMPLATE_ATTRIBUTE: p.template.name,
                PARENT_ATTRIBUTE: p.parent,
            },
            p.capacity(),
            consumes_counters=(p.consumes,),
        )
        for p in layout.vnpu_devices
    )
    return (whole, *parts)


def desired_slices(
    inventory: NodeInventory,
    *,
    driver: DriverName,
    generation: int,
    limit: int = MAX_DEVICES_PER_SLICE,
    taints: TaintPolicy | None = None,
    sharing: SharingPolicy | None = None,
) -> tuple[ResourceSlice, ...]:
    """The pool named after the node, split so no slice exceeds `limit` devices (64 once any
    device carries a taint, as the API server requires); the chips `sharing` shares published
    as sharing.py says (plain devices, without vNPUs).

    An empty inventory still yields one empty slice: "driver up, no devices" differs from
    "no pool". A chip offering vNPUs gets a slice of its own holding its counter set, the whole chip
    and its vNPU devices: in resource.k8s.io/v1 as 1.34 serves it, a device may only consume
    counters of its own slice, and a slice holds at most 32 counters in all.
    """
    devices = pool_devices(inventory, taints, sharing)
    if any(d.taints for d in devices):
        limit = min(limit, MAX_DEVICES_PER_SLICE_WITH_TAINTS)
    layouts = chip_layouts(inventory, sharing)
    if layouts and inventory.counter_slices:
        return _counters_apart(
            inventory, layouts, devices, driver=driver, generation=generation, limit=limit
        )
    whole = [d for d in devices if d.name not in layouts]
    chunks: list[tuple[tuple[PublishedDevice, ...], tuple[CounterSet, ...]]] = [
        (chunk, ()) for chunk in _chunks(whole, limit)
    ]
    for device in devices:
        if (layout := layouts.get(device.name)) is not None:
            chunks.append((vnpu_published_devices(device, layout), (layout.counter_set,)))
    chunks = chunks or [((), ())]
    pool = PoolRef(PoolName(inventory.node), generation, len(chunks))
    return tuple(
        ResourceSlice(driver, inventory.node, pool, devices, shared_counters=counters)
        for devices, counters in chunks
    )


def _counters_apart(
    inventory: NodeInventory,
    layouts: Mapping[DeviceName, ChipLayout],
    devices: Sequence[PublishedDevice],
    *,
    driver: DriverName,
    generation: int,
    limit: int,
) -> tuple[ResourceSlice, ...]:
    """The 1.35+ layout: counter sets in slices of their own (8 per slice), then the plain
    chips, then the chips offering vNPUs with their vNPU devices (64 per slice, as counters
    require)."""
    sets = [layout.counter_set for layout in layouts.values()]
    plain = [d for d in devices if d.name not in layouts]
    counting = [
        p
        for d in devices
        if (layout := layouts.get(d.name)) is not None
        for p in vnpu_published_devices(d, layout)
    ]
    chunks: list[tuple[tuple[PublishedDevice, ...], tuple[CounterSet, ...]]] = [
        ((), tuple(sets[i : i + MAX_COUNTER_SETS_PER_SLICE]))
        for i in range(0, len(sets), MAX_COUNTER_SETS_PER_SLICE)
    ]
    chunks += [(chunk, ()) for chunk in _chunks(plain, limit)]
    chunks += [
        (chunk, ()) for chunk in _chunks(counting, min(limit, MAX_COUNTING_DEVICES_PER_SLICE))
    ]
    pool = PoolRef(PoolName(inventory.node), generation, len(chunks))
    return tuple(
        ResourceSlice(driver, inventory.node, pool, devices, shared_counters=counters)
        for devices, counters in chunks
    )


def _chunks(devices: Sequence[PublishedDevice], size: int) -> list[tuple[PublishedDevice, ...]]:
    return [tuple(devices[i : i + size]) for i in range(0, len(devices), size)]
