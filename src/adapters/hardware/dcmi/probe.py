"""DcmiProbe: the HardwareProbe adapter that reads Ascend chips from libdcmi.so instead of npu-smi.

A full read asks DCMI for everything (library calls, no process): cards, chips, ids, name, AI
cores, memory/HBM, PCIe bus id, health code, current error codes, CPU affinity, device IP and
SuperPoD (reader.py, network.py). Re-probes come every few seconds for health, so within
`full_every_s` of the last full read (300 s, as the npu-smi probe) a re-probe lists the chips
again, looks at /dev and the host's driver files, and, if all are as they were, reads only each
chip's health code and error codes: the rest changes only with the hardware, the driver or
hccn_tool, and is read again by the next full read (at once if the chips, /dev or the driver
files changed). That is 2 calls a chip instead of 11, and no sysfs.

NUMA comes from sysfs as for npu-smi (NumaMap: the PCI device's `numa_node`, else the node whose
cpulist holds the chip's DCMI CPU affinity, as Huawei's plugin does, ascend-facts C.2).
Huawei's public header offers no HCCS topology query, so topology groups come from one
`npu-smi info -t topo` when an npu-smi path is given (read once: links change only with the
hardware), and are left out otherwise.

Health codes (ascend-facts A.3, from the DCMI documentation): 0 normal, 1 minor alarm, 2 major
alarm, 3 critical alarm; 0xFFFFFFFF the device does not exist; anything else is unknown. A chip's
current error codes then decide its health through the fault-code table (domain/fault_codes.py,
Huawei's or `--fault-codes`), as the npu-smi probe does with `npu-smi info -t health`; DCMI
answers them for every chip in the same pass, so no extra call is needed. A missing
/dev/davinciN keeps the chip at least Unhealthy whatever its codes say.

`subscribe_faults` subscribes to DCMI's fault events (faults.py) where the library offers them:
each event asks the caller for a re-probe at once, and the codes events raised and did not
recover count with the ones dcmi_get_device_errorcode_v2 lists.
"""

import ctypes
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.chips import CHIPS
from npu_dra.adapters.hardware.dcmi import library
from npu_dra.adapters.hardware.dcmi.faults import FaultEvents
from npu_dra.adapters.hardware.dcmi.reader import DcmiChip, chip_places, read_chips, read_health
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_topo import parse_topo, topology_groups
from npu_dra.adapters.hardware.npu_smi.runner import NpuSmiRunner
from npu_dra.adapters.hardware.npu_smi.sysfs import NumaMap, with_pcie_roots
from npu_dra.domain.device import Device, Health, NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.fault_codes import FaultCodeTable, built_in_table, worse
from npu_dra.domain.ids import DeviceName, NodeName

log = logging.getLogger(__name__)
NumaLookup = Callable[..., int | None]  # NumaMap.node_of(bus_id=..., cpus=...)
MIB = 2**20
HEALTH_CODES = {0: Health.HEALTHY, 1: Health.DEGRADED, 2: Health.UNHEALTHY, 3: Health.CRITICAL}
NO_DEVICE = 0xFFFFFFFF
TOPO = ("info", "-t", "topo")
FULL_EVERY_S = 300.0


@attrs.frozen
class _Seen:
    """What the last full read found: a re-probe that finds the same chips, /dev nodes and
    driver files reads only health on top of it."""

    inventory: NodeInventory
    chips: tuple[DcmiChip, ...]
    dev_nodes: frozenset[int]
    host: object
    at: float


class DcmiProbe:
    """Discovers this node's Ascend chips through DCMI; `error_codes` holds each device's
    current fault codes as of the last probe."""

    def __init__(
        self,
        *,
        node: NodeName,
        host: AscendHostPaths,
        library_path: Path | None = None,
        sysfs_root: Path = Path("/sys"),
        npu_smi: Path | None = None,
        timeout: float = 10.0,
        fault_table: FaultCodeTable | None = None,
        full_every_s: float = FULL_EVERY_S,
    ) -> None:
        self._table = fault_table or built_in_table()
        self._node, self._host, self._path = node, host, library_path
        self._sysfs_root, self._timeout = sysfs_root, timeout
        self._runner = NpuSmiRunner(path=npu_smi) if npu_smi else None
        self._library: ctypes.CDLL | None = None
        self._groups: tuple[str, Mapping[int, str]] | None = None
        self.error_codes: dict[DeviceName, tuple[int, ...]] = {}
        self._events = FaultEvents()
        self._full_every = full_every_s
        self._seen: _Seen | None = None

    def probe(self) -> NodeInventory:
        seen = self._seen
        if seen is not None and time.monotonic() - seen.at < self._full_every:
            again = self._health_again(seen)
            if again is not None:
                return again
        self._seen = None
        return self._read_all()

    def _health_again(self, seen: _Seen) -> NodeInventory | None:
        """The last inventory with each chip's health read again; None where the chips, /dev
        or the driver files changed (a full read is due)."""
        lib = self.start()
        places = chip_places(lib)
        dev_nodes = self._dev_nodes() if places else frozenset()
        if (
            places != tuple((c.card_id, c.chip_id) for c in seen.chips)
            or dev_nodes != seen.dev_nodes
            or self._host.host_files() != seen.host
        ):
            return None
        chips = {_name(c): read_health(lib, c) for c in seen.chips}
        devices = tuple(
            self._classified(
                attrs.evolve(d, health=_health(chips[d.name], dev_nodes)), chips[d.name], dev_nodes
            )
            for d in seen.inventory.devices
        )
        self.error_codes = {name: self._codes(c) for name, c in chips.items()}
        if devices == seen.inventory.devices:
            return seen.inventory
        self._seen = attrs.evolve(seen, inventory=attrs.evolve(seen.inventory, devices=devices))
        return self._seen.inventory

    def _read_all(self) -> NodeInventory:
        began = time.monotonic()
        chips = read_chips(self.start())
        dev_nodes = self._dev_nodes() if chips else frozenset()
        numa = NumaMap(self._sysfs_root)
        by, groups = self._topology() if chips else ("logic", {})
        built = [
            self._classified(_device(c, dev_nodes, numa.node_of, groups, by), c, dev_nodes)
            for c in chips
        ]
        devices = with_pcie_roots(sorted(built, key=lambda d: d.physical_id), self._sysfs_root)
        self.error_codes = {_name(c): self._codes(c) for c in chips}
        host = self._host.host_files()
        try:
            inventory = NodeInventory(self._node, devices, host)
        except DomainError as error:
            raise ProbeError(f"DCMI describes an impossible node: {error}") from error
        self._seen = _Seen(inventory, chips, dev_nodes, host, began)
        return inventory

    def start(self) -> ctypes.CDLL:
        """The library, loaded and dcmi_init'ed once; ProbeError if it cannot start (then the
        next probe tries again)."""
        if self._library is None:
            loaded = library.load(self._path)
            library.check("dcmi_init", loaded.dcmi_init())
            log.info("DCMI loaded from %s", self._path or "the loader's search path")
            self._library = loaded
        return self._library

    def subscribe_faults(self, on_fault: Callable[[], None]) -> bool:
        """Subscribe to DCMI's fault events for every chip; False (logged) where the library
        cannot start or offers none: health is then polled."""
        try:
            why = self._events.subscribe(self.start(), on_fault)
        except ProbeError as error:
            why = str(error)
        if why is None:
            log.info("DCMI fault events subscribed: a fault is re-probed as it is announced")
            return True
        log.warning("DCMI fault events unavailable, health is polled: %s", why)
        return False

    def _codes(self, chip: DcmiChip) -> tuple[int, ...]:
        """The codes DCMI lists for the chip, then those its events raised (in code order)."""
        raised = self._events.raised(chip.logic_id) - set(chip.error_codes)
        return (*chip.error_codes, *sorted(raised))

    def _topology(self) -> tuple[str, Mapping[int, str]]:
        """HCCS groups by logic or physical id (as npu-smi keys them), from npu-smi if given."""
        if self._runner is None:
            return ("logic", {})
        if self._groups is None:
            topology = parse_topo(self._runner.run(TOPO, timeout=self._timeout))
            by = topology.by if topology else "logic"
            self._groups = (by, topology_groups(topology) if topology else {})
        return self._groups

    def _dev_nodes(self) -> frozenset[int]:
        """N of every /dev/davinciN (davinci_manager and friends are not chips)."""
        root = self._host.dev_root
        try:
            names = [path.name.removeprefix("davinci") for path in root.glob("davinci*")]
        except OSError as error:
            raise ProbeError(f"{root}: {error}") from error
        return frozenset(int(n) for n in names if n.isascii() and n.isdigit())

    def _classified(self, device: Device, chip: DcmiChip, dev_nodes: frozenset[int]) -> Device:
        """The device's health from its error codes; logged when its codes change."""
        current = self._codes(chip)
        codes = [f"{code:08X}" for code in current]
        verdict = self._table.classify(codes, reported=device.health)
        health = verdict.health
        if chip.physical_id not in dev_nodes:
            health = worse(health, Health.UNHEALTHY)
        if current != self.error_codes.get(device.name, ()):
            shown = " ".join(codes) or "none"
            why = f" ({verdict.reason})" if verdict.reason else ""
            log.warning("%s: DCMI error codes %s: %s%s", device.name, shown, health.value, why)
        return attrs.evolve(device, health=health)


def _device(
    chip: DcmiChip,
    dev_nodes: frozenset[int],
    numa: NumaLookup,
    groups: Mapping[int, str],
    by: str,
) -> Device:
    facts = CHIPS.get(chip.name)
    topo_id = chip.physical_id if by == "physical" else chip.logic_id
    return Device(
        name=_name(chip),
        physical_id=chip.physical_id,
        logic_id=chip.logic_id,
        card_id=chip.card_id,
        chip_id=chip.chip_id,
        chip_name=chip.name,
        memory_bytes=chip.memory_mib * MIB,
        health=_health(chip, dev_nodes),
        numa_node=numa(bus_id=chip.bus_id, cpus=chip.affinity),
        topology_group=groups.get(topo_id),
        pci_bus_id=chip.bus_id,
        aicore_count=chip.aicores or (facts.aicores if facts else None),
        device_ip=chip.device_ip,
        super_pod_id=chip.super_pod_id,
    )


def _name(chip: DcmiChip) -> DeviceName:
    return DeviceName(f"npu-{chip.physical_id}")


def _health(chip: DcmiChip, dev_nodes: frozenset[int]) -> Health:
    if chip.physical_id not in dev_nodes:
        physical = chip.physical_id
        log.warning(
            "npu-%d: /dev/davinci%d is missing; publishing it Unhealthy", physical, physical
        )
        return Health.UNHEALTHY
    if chip.health_code == NO_DEVICE:
        return Health.UNHEALTHY
    return HEALTH_CODES.get(chip.health_code, Health.UNKNOWN)
