"""Fake hardware from a node description file, for the simulation, demos and tests.

The file says what an npu-smi probe would have found, in a few lines:

    chip: 910B4            # any model; memory/aicores default from chips.py
    count: 8
    memory: 32Gi           # per chip, optional
    numaNodes: [6, 6, 4, 4, 0, 0, 2, 2]   # per chip, optional
    topology: mesh         # mesh (910B: one HCCS group) | rings (910 A+X: groups of 4) | none
    health: {3: Warning}   # npu-smi words by physical id, optional (default OK)
    errorCodes: {3: ["80E18402"]}   # error codes by physical id, optional: classified by the
                           # fault-code table (domain/fault_codes.py) as npu-smi's would be
    sharedDeviceNodes: [davinci_manager, devmm_svm, hisi_hdc]   # under /dev (this default)
    deviceIPs: {0: 192.168.100.101/24}   # the NPUs' RoCE addresses by physical id, optional
    superPodId: 2          # the SuperPoD the node sits in, optional (A3 SuperPoD nodes)
    vnpu: 910B4            # chips can be split: a recorded preset (vnpu_presets.py), or
                           # {preset?, totals: {aicore: 20, ...}, templates: {vir05_1c_8g: {...}}}

Given `host` paths (the plugin's flags), the device nodes are said to live under its dev root
and the driver files it finds there are reported, so a test node with `mknod`-made nodes and a
stand-in npu-smi gets real CDI content; without, nothing on this machine is looked at.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.chips import CHIPS, ChipFacts
from npu_dra.adapters.hardware.description import ASCEND_FIELDS, check_description
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake_vnpu import FakeVnpuTable
from npu_dra.adapters.hardware.health_words import health_of
from npu_dra.adapters.hardware.sharing_mode import FakeSharingMode
from npu_dra.adapters.hardware.vnpu_presets import vnpu_offer_from
from npu_dra.domain.device import Device, Health, HostFiles, NodeInventory
from npu_dra.domain.device_facts import interface_address
from npu_dra.domain.errors import DomainError
from npu_dra.domain.fault_codes import CODE, FaultCodeTable, built_in_table
from npu_dra.domain.ids import DeviceName, NodeName
from npu_dra.domain.quantity import Quantity

RING_SIZE = 4
SHARED_DEVICE_NODES = ("davinci_manager", "devmm_svm", "hisi_hdc")  # a typical training server


class FakeHardware:
    """A HardwareProbe answering from a description (a file path or an already-parsed mapping)."""

    def __init__(
        self,
        description: Path | Mapping[str, Any],
        *,
        node: NodeName,
        host: AscendHostPaths | None = None,
        fault_table: FaultCodeTable | None = None,
    ) -> None:
        self._source = str(description) if isinstance(description, Path) else "description"
        self._description = description
        self._node = node
        self._host = host
        self._health_overrides: dict[int, Health] = {}
        self._vnpu_table: FakeVnpuTable | None = None
        self._fault_table = fault_table
        self._device_share = FakeSharingMode()

    def device_share(self) -> FakeSharingMode:
        """The chips' container-sharing mode (a SharingMode): the node's one."""
        return self._device_share

    def vnpu_table(self) -> FakeVnpuTable | None:
        """The vNPU table (the vNPU capability) if the description has `vnpu:`."""
        if self._vnpu_table is None:
            spec = self._load()
            if spec.get("vnpu") is None:
                return None
            try:
                self._vnpu_table = FakeVnpuTable(vnpu_offer_from(spec["vnpu"]))
            except (DomainError, TypeError, ValueError, AttributeError) as error:
                raise ProbeError(f"{self._source}: vnpu: {error}") from error
        return self._vnpu_table

    def probe(self) -> NodeInventory:
        spec = self._load()
        try:
            devices = self._classified(spec, _devices(spec, self._health_overrides))
            return NodeInventory(self._node, devices, self._host_files(spec))
        except (DomainError, KeyError, TypeError, ValueError) as error:
            raise ProbeError(f"{self._source}: {error}") from error

    def set_health(self, physical_id: int, health: Health) -> None:
        """Flip a device's health, as a failing chip would (tests and demos)."""
        self._health_overrides[physical_id] = health

    def _classified(
        self, spec: Mapping[str, Any], devices: tuple[Device, ...]
    ) -> tuple[Device, ...]:
        """Each device with `errorCodes` gets the health its codes give (its word for codes the
        table does not know); one whose health a test flipped keeps it."""
        codes = _error_codes(spec)
        if not codes:
            return devices
        table = self._fault_table = self._fault_table or built_in_table()
        return tuple(
            _classified(d, table, codes[d.physical_id])
            if d.physical_id in codes and d.physical_id not in self._health_overrides
            else d
            for d in devices
        )

    def _host_files(self, spec: Mapping[str, Any]) -> HostFiles:
        listed = spec.get("sharedDeviceNodes", SHARED_DEVICE_NODES)
        if not isinstance(listed, list | tuple) or not all(isinstance(n, str) for n in listed):
            raise ValueError(f"sharedDeviceNodes {listed!r}: expected a list of names")
        nodes = frozenset(listed)
        if self._host is None:
            return HostFiles(device_nodes=nodes)
        return self._host.host_files(shared_nodes=nodes)

    def _load(self) -> Mapping[str, Any]:
        if not isinstance(self._description, Path):
            return self._description
        try:
            loaded = yaml.safe_load(self._description.read_text())
        except (OSError, yaml.YAMLError) as error:
            raise ProbeError(f"{self._source}: {error}") from error
        if not isinstance(loaded, Mapping):
            raise ProbeError(f"{self._source}: expected a mapping with 'chip' and 'count'")
        return loaded


def _devices(spec: Mapping[str, Any], overrides: Mapping[int, Health]) -> tuple[Device, ...]:
    check_description(spec, ASCEND_FIELDS)
    chip = str(spec["chip"])
    count = int(spec["count"])
    facts = CHIPS.get(chip)
    memory = spec.get("memory") or (f"{facts.memory_mib}Mi" if facts else None)
    if memory is None:
        known = ", ".join(sorted(CHIPS))
        raise ValueError(
            f"chip {chip!r} is not known (known: {known}); for another chip, give 'memory'"
        )
    numa = list(spec.get("numaNodes") or [None] * count)
    if len(numa) != count:
        raise ValueError(f"numaNodes has {len(numa)} entries for {count} chips")
    words = {int(k): str(v) for k, v in (spec.get("health") or {}).items()}
    devices = tuple(
        Device(
            name=DeviceName(f"npu-{i}"),
            physical_id=i,
            logic_id=i,
            card_id=i,
            chip_id=0,
            chip_name=chip,
            memory_bytes=int(Quantity.parse(str(memory)).value),
            health=overrides.get(i) or _health(words.get(i, "OK")),
            numa_node=None if numa[i] is None else int(numa[i]),
            topology_group=_group(str(spec.get("topology", "mesh")), i),
            pci_bus_id=f"0000:{0xC1 + i:02x}:00.0",
            aicore_count=_aicores(spec, facts),
        )
        for i in range(count)
    )
    return _with_network(spec, devices)


def _with_network(spec: Mapping[str, Any], devices: tuple[Device, ...]) -> tuple[Device, ...]:
    """`deviceIPs` (CIDR, by physical id) and `superPodId`, as DCMI would tell them."""
    given = spec.get("deviceIPs") or {}
    if not isinstance(given, Mapping):
        raise ValueError(f"deviceIPs {given!r}: expected physical id -> IP address")
    addresses = {int(k): interface_address(str(v)) for k, v in given.items()}
    pod = spec.get("superPodId")
    if pod is not None and (isinstance(pod, bool) or not isinstance(pod, int) or pod < 0):
        raise ValueError(f"superPodId {pod!r}: expected a whole number")
    return tuple(
        attrs.evolve(d, device_ip=addresses.get(d.physical_id), super_pod_id=pod) for d in devices
    )


def _classified(device: Device, table: FaultCodeTable, codes: tuple[str, ...]) -> Device:
    verdict = table.classify(codes, reported=device.health)
    return attrs.evolve(device, health=verdict.health, fault=verdict.reason)


def _error_codes(spec: Mapping[str, Any]) -> dict[int, tuple[str, ...]]:
    given = spec.get("errorCodes") or {}
    if not isinstance(given, Mapping):
        raise ValueError(f"errorCodes {given!r}: expected physical id -> list of codes")
    codes: dict[int, tuple[str, ...]] = {}
    for key, listed in given.items():
        if not isinstance(listed, list) or not all(
            isinstance(c, str) and CODE.match(c) for c in listed
        ):
            raise ValueError(f"errorCodes[{key}] {listed!r}: expected quoted 8-hex-digit codes")
        codes[int(key)] = tuple(listed)
    return codes


def _aicores(spec: Mapping[str, Any], facts: ChipFacts | None) -> int | None:
    given = spec.get("aicores")
    return int(given) if given is not None else (facts.aicores if facts else None)


def _health(word: str) -> Health:
    health = health_of(word)
    if health is None:
        raise ValueError(f"health {word!r} is not an npu-smi health word")
    return health


def _group(topology: str, index: int) -> str | None:
    if topology == "mesh":
        return "ring-0"
    if topology == "rings":
        return f"ring-{index // RING_SIZE}"
    if topology == "none":
        return None
    raise ValueError(f"topology {topology!r}: expected mesh, rings or none")
