"""A probe whose inventory also says which chips can be split, and how (`--partitions=templates`).

Partitioning is an optional capability: the inventory of a backend without it, or of a chip
whose npu-smi answers that vNPUs are not supported, stays whole chips only.
"""

from pathlib import Path

import attrs

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.partitions.ports import VnpuTable
from npu_dra.domain.ports import HardwareProbe


class SlicedProbe:
    def __init__(
        self, probe: HardwareProbe, table: VnpuTable, *, counter_slices: bool = False
    ) -> None:
        self._probe = probe
        self._table = table
        self._counter_slices = counter_slices

    def probe(self) -> NodeInventory:
        inventory = self._probe.probe()
        slicing = {
            d.name: s
            for d in inventory.devices
            if d.health.usable and (s := self._table.slicing(device=d)) is not None
        }
        return attrs.evolve(inventory, slicing=slicing, counter_slices=self._counter_slices)


def vnpu_table_for(mode: str, kind: str, probe: HardwareProbe, npu_smi: Path) -> VnpuTable | None:
    """The backend's partitioning capability, when `--partitions` asks for it and it has one."""
    if mode != "templates":
        return None
    if isinstance(probe, FakeHardware):
        return probe.vnpu_table()
    if kind == "npu_smi":
        return NpuSmiVnpuTable(npu_smi=npu_smi)
    return None


def sliced_if_described(probe: HardwareProbe) -> HardwareProbe:
    """Fake hardware whose description has `vnpu:` publishes partitions (the simulation)."""
    if isinstance(probe, FakeHardware) and (table := probe.vnpu_table()) is not None:
        return SlicedProbe(probe, table)
    return probe
