"""What a node publishes: its devices as ResourceSlice content, split into slices of <=128.

Each device's profile says which attributes and capacities it publishes (Ascend: the seed's
chipName, numaNode, physicalId, topologyGroup and memCapacity). Unusable devices are left out of
the pool so the scheduler can never hand them out, unless a taint policy is given (the API server
serves device taints): then they stay, tainted as `device_taints.py` says.
"""

from collections.abc import Mapping, Sequence

import attrs

from npu_dra.domain.attributes import (
    AttributeValue,
    check_attribute_value,
    check_qualified_name,
)
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.device_taints import DeviceTaint, TaintPolicy
from npu_dra.domain.ids import DeviceName, DriverName, NodeName, PoolName
from npu_dra.domain.profile import PCI_BUS_ID, profile_named
from npu_dra.domain.quantity import Quantity

MAX_DEVICES_PER_SLICE = 128
MAX_DEVICES_PER_SLICE_WITH_TAINTS = 64  # the API server's limit once any device has a taint
__all__ = ["PCI_BUS_ID", "PoolRef", "PublishedDevice", "ResourceSlice", "desired_slices"]


@attrs.frozen
class PublishedDevice:
    name: DeviceName
    attributes: Mapping[str, AttributeValue] = attrs.field(factory=dict)
    capacity: Mapping[str, Quantity] = attrs.field(factory=dict)
    taints: tuple[DeviceTaint, ...] = ()


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


def published_device(device: Device, taints: tuple[DeviceTaint, ...] = ()) -> PublishedDevice:
    """The device as its profile publishes it; every name and value checked."""
    profile = profile_named(device.profile)
    attributes = profile.attributes(device)
    for key, value in attributes.items():
        check_attribute_value(check_qualified_name(key), value)
    return PublishedDevice(device.name, attributes, profile.capacity(device), taints)


def pool_devices(
    inventory: NodeInventory, taints: TaintPolicy | None = None
) -> tuple[PublishedDevice, ...]:
    """Usable devices, and with a taint policy the unusable ones it taints too (one it leaves
    untainted, e.g. Unknown=None, is left out as without taints: never offered bare)."""
    published = []
    for device in inventory.devices:
        tainted = taints.taints_of(device) if taints is not None else ()
        if device.health.usable or tainted:
            published.append(published_device(device, tainted))
    return tuple(published)


def desired_slices(
    inventory: NodeInventory,
    *,
    driver: DriverName,
    generation: int,
    limit: int = MAX_DEVICES_PER_SLICE,
    taints: TaintPolicy | None = None,
) -> tuple[ResourceSlice, ...]:
    """The pool named after the node, split so no slice exceeds `limit` devices (64 once any
    device carries a taint, as the API server requires).

    An empty inventory still yields one empty slice: "driver up, no devices" differs from
    "no pool".
    """
    devices = pool_devices(inventory, taints)
    if any(d.taints for d in devices):
        limit = min(limit, MAX_DEVICES_PER_SLICE_WITH_TAINTS)
    chunks = _chunks(devices, limit) or [()]
    pool = PoolRef(PoolName(inventory.node), generation, len(chunks))
    return tuple(ResourceSlice(driver, inventory.node, pool, chunk) for chunk in chunks)


def _chunks(devices: Sequence[PublishedDevice], size: int) -> list[tuple[PublishedDevice, ...]]:
    return [tuple(devices[i : i + size]) for i in range(0, len(devices), size)]
