"""A device as a ResourceSlice publishes it, and how much of a capacity one allocation of a
multi-allocatable device takes (KEP-5075, DRAConsumableCapacity).

Apart from pool.py so that what turns one chip into other published devices (sharing.py) can
build them without importing the pool that calls it; pool.py re-exports them.
"""

from collections.abc import Mapping

import attrs

from npu_dra.domain.attributes import AttributeValue
from npu_dra.domain.device_taints import DeviceTaint
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.vnpu.layout import CounterConsumption


@attrs.frozen
class CapacityRange:
    """`requestPolicy.validRange`: a request is rounded up to `minimum + k * step` (KEP-5075)."""

    minimum: Quantity
    maximum: Quantity | None = None
    step: Quantity | None = None


@attrs.frozen
class RequestPolicy:
    """How much of a capacity one allocation of a multi-allocatable device takes: `default`
    when the request names none, else a request fitted to `valid_values` or `valid_range`."""

    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    valid_range: CapacityRange | None = None


@attrs.frozen
class PublishedDevice:
    """`allow_multiple_allocations` (DRAConsumableCapacity): several claims may hold the device
    at once, each consuming part of each capacity as its `request_policies` say."""

    name: DeviceName
    attributes: Mapping[str, AttributeValue] = attrs.field(factory=dict)
    capacity: Mapping[str, Quantity] = attrs.field(factory=dict)
    consumes_counters: tuple[CounterConsumption, ...] = ()
    taints: tuple[DeviceTaint, ...] = ()
    allow_multiple_allocations: bool = False
    request_policies: Mapping[str, RequestPolicy] = attrs.field(factory=dict)
