"""The view of a device a CEL selector sees: `device.driver`, `.attributes[domain]`, `.capacity`.

Unqualified attribute names belong to the driver's domain, exactly as the scheduler files them.
"""

from collections.abc import Mapping

import attrs

from npu_dra.domain.attributes import AttributeValue, qualify
from npu_dra.domain.ids import DriverName
from npu_dra.domain.pool import PublishedDevice
from npu_dra.domain.quantity import Quantity


@attrs.frozen
class SelectorDevice:
    driver: DriverName
    attributes: Mapping[str, Mapping[str, AttributeValue]]
    capacity: Mapping[str, Mapping[str, Quantity]]
    allow_multiple_allocations: bool = (
        False  # DRAConsumableCapacity's `device.allowMultipleAllocations`
    )


def selector_view(device: PublishedDevice, driver: DriverName) -> SelectorDevice:
    attributes: dict[str, dict[str, AttributeValue]] = {}
    for name, value in device.attributes.items():
        domain, identifier = qualify(name, driver)
        attributes.setdefault(domain, {})[identifier] = value
    capacity: dict[str, dict[str, Quantity]] = {}
    for name, quantity in device.capacity.items():
        domain, identifier = qualify(name, driver)
        capacity.setdefault(domain, {})[identifier] = quantity
    return SelectorDevice(driver, attributes, capacity, device.allow_multiple_allocations)
