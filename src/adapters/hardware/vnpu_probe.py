"""A probe whose inventory also says which chips can be split, and how (`--vnpu=templates`).

vNPUs are an optional capability: the inventory of a backend without it, or of a chip
whose npu-smi answers that vNPUs are not supported, stays whole chips only.
"""

from pathlib import Path

import attrs

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ports import HardwareProbe, VnpuTable


class VnpuProbe:
    def __init__(
        self, probe: HardwareProbe, table: VnpuTable, *, counter_slices: bool = False
    ) -> None:
        self._probe = probe
        self._table = table
        self._counter_slices = counter_slices

    def probe(self) -> NodeInventory:
        inventory = self._probe.probe()
        vnpu_offer = {
            d.name: s
            for d in inventory.devices
            if d.health.usable and (s := self._table.vnpu_offer(device=d)) is not None
        }
        return attrs.evolve(inventory, vnpu_offers=vnpu_offer, counter_slices=self._counter_slices)


def vnpu_table_for(mode: str, kind: str, probe: HardwareProbe, npu_smi: Path) -> VnpuTable | None:
    """The backend's vNPU capability, when `--vnpu` asks for it and it has one."""
    if mode != "templates":
        return None
    if isinstance(probe, FakeHardware):
        return probe.vnpu_table()
    if kind == "npu_smi":
        return NpuSmiVnpuTable(npu_smi=npu_smi)
    return None


def vnpu_probe_if_described(probe: HardwareProbe) -> HardwareProbe:
    """Fake hardware whose description has `vnpu:` publishes vNPU devices (the simulation)."""
    if isinstance(probe, FakeHardware) and (table := probe.vnpu_table()) is not None:
        return VnpuProbe(probe, table)
    return probe
