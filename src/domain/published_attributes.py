"""The attributes and capacities each profile publishes for a device (domain/profile.py picks
them per vendor): the seed's Ascend names, NVIDIA's own DRA driver's GPU names, Huawei's own DRA
driver's two, the device's kind (domain/device_kinds.py) and the standard
`resource.kubernetes.io/` names any vendor's device carries.
"""

from npu_dra.domain.attributes import AttributeValue
from npu_dra.domain.device import Device
from npu_dra.domain.device_kinds import TYPE_ATTRIBUTE
from npu_dra.domain.huawei_names import DEVICE_TYPE, PHYSIC_ID, huawei_device_type
from npu_dra.domain.quantity import Quantity

PCI_BUS_ID = "resource.kubernetes.io/pciBusID"  # the standard attributes, any vendor
STANDARD_NUMA_NODE = "resource.kubernetes.io/numaNode"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"


def common_attributes(device: Device) -> dict[str, AttributeValue]:
    """`type` (domain/device_kinds: the profile's name is a whole device's), NUMA node, HCCS
    group and the standard attributes (k8s.io/dynamic-resource-allocation v0.37.2
    deviceattribute/attribute.go: `numaNode` an int, left out where the node is not known;
    `pcieRoot` where sysfs tells it)."""
    attributes: dict[str, AttributeValue] = {TYPE_ATTRIBUTE: device.profile}
    if device.numa_node is not None:
        attributes["numaNode"] = device.numa_node
        if device.numa_node >= 0:
            attributes[STANDARD_NUMA_NODE] = device.numa_node
    if device.topology_group is not None:
        attributes["topologyGroup"] = device.topology_group
    if device.pci_bus_id is not None:
        attributes[PCI_BUS_ID] = device.pci_bus_id.lower()
    if device.pcie_root is not None:
        attributes[PCIE_ROOT] = device.pcie_root
    return attributes | dict(device.properties)


def ascend_attributes(device: Device) -> dict[str, AttributeValue]:
    """The seed's names (`kubectl get resourceslices -o yaml`): chipName, physicalId, ...; and
    Huawei's own DRA driver's two (domain/huawei_names.py), so its claims run unchanged."""
    attributes: dict[str, AttributeValue] = {
        "chipName": device.chip_name,
        "physicalId": device.physical_id,
        "logicId": device.logic_id,
        "cardId": device.card_id,
        "chipId": device.chip_id,
        DEVICE_TYPE: huawei_device_type(device.chip_name),
        PHYSIC_ID: device.physical_id,
    }
    return attributes | common_attributes(device)


def ascend_capacity(device: Device) -> dict[str, Quantity]:
    capacity = {"memCapacity": Quantity.of_bytes(device.memory_bytes)}
    if device.aicore_count is not None:
        capacity["aiCores"] = Quantity.of_bytes(device.aicore_count)
    return capacity


def gpu_attributes(device: Device) -> dict[str, AttributeValue]:
    """NVIDIA's own DRA driver's names where it has them (index, minor, uuid, productName...)."""
    attributes: dict[str, AttributeValue] = {
        "index": device.logic_id,
        "minor": device.physical_id,
        "productName": device.chip_name,
    }
    if device.uuid is not None:
        attributes["uuid"] = device.uuid
    return attributes | common_attributes(device)
