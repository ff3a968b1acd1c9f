"""NUMA nodes and PCIe root complexes of chips, from sysfs: what the kernel says beats what we
could infer.

First choice is the PCI device's `numa_node` file (`-1` means the kernel does not know). Where
that fails (no bus id on SoC parts, `-1`, a container without the device) the chip's CPU
affinity from `npu-smi info -t topo` is matched against each node's `cpulist`, as Huawei's own
device plugin does (ascend-facts C.2). Paths are under a configurable root so tests and
containers with a relocated /sys work.
"""

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_topo import parse_cpu_list
from npu_dra.domain.device import Device
from npu_dra.domain.vnpu.templates import shown

MAX_FILE_BYTES = 64 * 2**10  # numa_node and cpulist are one short line


class NumaMap:
    """Answers `node_of(bus_id, cpus)`; reads node cpulists once per instance."""

    def __init__(self, sysfs_root: Path) -> None:
        self._root = sysfs_root
        self._node_cpus: Mapping[int, frozenset[int]] | None = None

    def node_of(self, *, bus_id: str | None, cpus: frozenset[int] | None) -> int | None:
        from_pci = self._pci_node(bus_id) if bus_id else None
        if from_pci is not None or not cpus:
            return from_pci
        holders = [node for node, node_cpus in self._nodes().items() if cpus <= node_cpus]
        return holders[0] if len(holders) == 1 else None

    def _pci_node(self, bus_id: str) -> int | None:
        path = self._root / "bus" / "pci" / "devices" / bus_id.lower() / "numa_node"
        text = _read(path)
        if text is None:
            return None
        try:
            node = int(text)
        except ValueError:
            raise ProbeError(f"{path}: {shown(text)} is not a NUMA node number") from None
        return node if node >= 0 else None

    def _nodes(self) -> Mapping[int, frozenset[int]]:
        if self._node_cpus is None:
            self._node_cpus = dict(self._read_nodes())
        return self._node_cpus

    def _read_nodes(self) -> list[tuple[int, frozenset[int]]]:
        nodes = []
        for path in sorted((self._root / "devices" / "system" / "node").glob("node*/cpulist")):
            number = path.parent.name.removeprefix("node")
            text = _read(path)
            cpus = parse_cpu_list(text) if text else frozenset()
            if not number.isdigit() or cpus is None:
                raise ProbeError(f"{path}: {shown(text or '')} is not a CPU list")
            nodes.append((int(number), cpus))
        return nodes


def _read(path: Path) -> str | None:
    """The file's text, or None if it is absent; a file over MAX_FILE_BYTES is an error."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ProbeError(f"{path}: {error.strerror or error}") from error
    if len(data) > MAX_FILE_BYTES:
        raise ProbeError(f"{path}: more than {MAX_FILE_BYTES} bytes (the kernel writes a line)")
    return data.decode("utf-8", errors="replace").strip()


# `/sys/bus/pci/devices/<bdf>` links into `/sys/devices/pci<domain>:<bus>/...`: that first
# component is the device's PCIe root complex, the standard `resource.kubernetes.io/pcieRoot`
# (k8s.io/dynamic-resource-allocation v0.37.2 deviceattribute/pci_linux.go, resolvePCIeRoot).
_ROOT_COMPLEX = re.compile(r"^pci[0-9a-f]{4}:[0-9a-f]{2}\Z")


def pcie_root(sysfs_root: Path, bus_id: str | None) -> str | None:
    """The PCIe root complex of the device at `bus_id`, None where sysfs does not say (no bus id,
    no link, a link of another shape)."""
    if not bus_id:
        return None
    try:
        target = os.readlink(sysfs_root / "bus" / "pci" / "devices" / bus_id.lower())
    except OSError:
        return None
    parts = Path(target).parts
    if "devices" not in parts:
        return None
    after = parts[parts.index("devices") + 1 :]
    return after[0] if after and _ROOT_COMPLEX.match(after[0]) else None


def with_pcie_roots(devices: Iterable[Device], sysfs_root: Path) -> tuple[Device, ...]:
    return tuple(attrs.evolve(d, pcie_root=pcie_root(sysfs_root, d.pci_bus_id)) for d in devices)
