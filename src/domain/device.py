"""What a node has: its accelerator devices, their health and topology, as probed from hardware."""

import enum
from collections import Counter
from collections.abc import Iterable, Mapping

import attrs

from npu_dra.domain.attributes import AttributeValue, is_dns_label
from npu_dra.domain.errors import InventoryError
from npu_dra.domain.ids import DeviceName, NodeName
from npu_dra.domain.vnpu.templates import VnpuOffer


class Health(enum.Enum):
    """The hardware's health, reduced to what scheduling needs."""

    HEALTHY = "Healthy"
    DEGRADED = "Degraded"  # minor alarm ("Warning"): still usable, worth a log line
    UNHEALTHY = "Unhealthy"  # major alarm ("Alarm") or device gone
    CRITICAL = "Critical"  # urgent alarm ("Critical"): work on it should stop (device_taints.py)
    UNKNOWN = "Unknown"

    @property
    def usable(self) -> bool:
        return self in (Health.HEALTHY, Health.DEGRADED)


@attrs.frozen
class Device:
    """One schedulable accelerator (an NPU die, a GPU). Names are stable across probes and
    restarts. `physical_id` is the N of the device's node (/dev/davinciN, /dev/nvidiaN);
    `logic_id` the vendor tool's index; card/chip ids place dies on multi-die cards."""

    name: DeviceName = attrs.field()
    physical_id: int
    logic_id: int
    card_id: int
    chip_id: int
    chip_name: str
    memory_bytes: int
    health: Health = Health.HEALTHY
    numa_node: int | None = None
    topology_group: str | None = None
    pci_bus_id: str | None = None
    pcie_root: str | None = None  # `pci<domain>:<bus>`, the root complex sysfs places it under
    aicore_count: int | None = None
    profile: str = "npu"  # the DeviceProfile that names, publishes and injects it
    uuid: str | None = None
    # Vendor facts the profile publishes as attributes (driver version, compute capability...),
    # by attribute name; a tuple so a Device stays hashable.
    properties: tuple[tuple[str, AttributeValue], ...] = ()
    # Why its health is what it is where its error codes decided (fault_codes.py), e.g.
    # "SeparateNPU: 80E18402"; empty where the health word alone did.
    fault: str = ""
    # Where the hardware tells them (DCMI's dcmi_get_device_ip and SuperPoD info, or npu-smi;
    # the hardware adapter names its source): the NPU's RoCE address in CIDR form
    # (domain/device_facts.py) and the SuperPoD it sits in. None: not known on this node.
    device_ip: str | None = None
    super_pod_id: int | None = None

    @name.validator
    def _check_name(self, _: "attrs.Attribute[DeviceName]", value: str) -> None:
        if not is_dns_label(value):
            raise InventoryError(f"device name {value!r} is not a DNS label")

    @property
    def identity(self) -> str | None:
        """Which physical device this is, whatever it is named after a reboot: its UUID (a
        GPU's), else its PCI address; None where the hardware told neither."""
        if self.uuid:
            return f"uuid:{self.uuid}"
        return f"pci:{self.pci_bus_id}" if self.pci_bus_id else None


@attrs.frozen
class HostFile:
    """A driver file or directory the host has, and where containers expect to find it."""

    host_path: str
    container_path: str


@attrs.frozen
class HostFiles:
    """What the host offers containers besides the chips, as the hardware adapter found it.

    `dev_root` is the host directory holding the device nodes (`/dev` on a node); `device_nodes`
    names the shared nodes present there (`davinci_manager`, ...); `driver_files` the driver
    files present. Presence is I/O, so adapters report it and the domain only reads it.
    """

    dev_root: str = "/dev"
    device_nodes: frozenset[str] = frozenset()
    driver_files: tuple[HostFile, ...] = ()


@attrs.frozen
class NodeInventory:
    """All devices of one node; construction fails on duplicate names or physical ids.

    `vnpu_offers` says, per chip that can be split into vNPUs, its totals and templates; it is
    empty unless `--vnpu=templates` is on and the hardware can split chips.
    """

    node: NodeName
    devices: tuple[Device, ...]
    host: HostFiles = HostFiles()
    vnpu_offers: Mapping[DeviceName, VnpuOffer] = attrs.field(factory=dict)
    # Counter sets go in slices of their own (the layout 1.35+ requires) instead of beside the
    # devices consuming them (the only layout 1.34 accepts): what the API server took at start.
    counter_slices: bool = False

    def __attrs_post_init__(self) -> None:
        _reject_duplicates("device name", (d.name for d in self.devices))
        _reject_duplicates("physical id", (d.physical_id for d in self.devices))

    def get(self, name: DeviceName) -> Device | None:
        return next((d for d in self.devices if d.name == name), None)

    def with_health(self, name: DeviceName, health: Health) -> "NodeInventory":
        devices = tuple(
            attrs.evolve(d, health=health) if d.name == name else d for d in self.devices
        )
        return attrs.evolve(self, devices=devices)


def _reject_duplicates(what: str, values: Iterable[object]) -> None:
    repeated = sorted(str(v) for v, n in Counter(values).items() if n > 1)
    if repeated:
        raise InventoryError(f"duplicate {what}: {', '.join(repeated)}")
