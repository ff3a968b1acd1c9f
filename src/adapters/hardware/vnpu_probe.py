"""A probe whose inventory also says which chips can be split, and how (`--vnpu=templates`).

vNPUs are an optional capability: the inventory of a backend without it, or of a chip
whose npu-smi answers that vNPUs are not supported, stays whole chips only. So does a chip whose
vNPU answer cannot be read (npu-smi failing, hanging, printing what no parser reads): the chips
after it are not asked in that probe, so a hung npu-smi costs one timeout per probe, not one per
chip, and the node's whole chips are still published. Said once per change, in the log.
"""

import logging
import threading
from pathlib import Path

import attrs

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.ports import HardwareProbe, VnpuTable
from npu_dra.domain.vnpu.templates import VnpuOffer

log = logging.getLogger(__name__)


class VnpuProbe:
    def __init__(
        self, probe: HardwareProbe, table: VnpuTable, *, counter_slices: bool = False
    ) -> None:
        self._probe = probe
        self._table = table
        self._counter_slices = counter_slices
        self._said: str | None = None  # the unreadable answer last logged
        self._lock = threading.Lock()

    def probe(self) -> NodeInventory:
        inventory = self._probe.probe()
        offers: dict[DeviceName, VnpuOffer] = {}
        problem = None
        for device in (d for d in inventory.devices if d.health.usable):
            try:
                offer = self._table.vnpu_offer(device=device)
            except DomainError as error:
                problem = f"{device.name}: {error}"
                break
            if offer is not None:
                offers[device.name] = offer
        self._say(problem)
        return attrs.evolve(inventory, vnpu_offers=offers, counter_slices=self._counter_slices)

    def _say(self, problem: str | None) -> None:
        with self._lock:
            if problem == self._said:
                return
            was, self._said = self._said, problem
        if problem is not None:
            log.warning(
                "cannot read the vNPU offer of %s; it and the chips after it publish as whole "
                "chips until a later probe reads them",
                problem,
            )
        elif was is not None:
            log.info("vNPU offers read again: every chip that offers vNPUs publishes them")


def vnpu_table_for(
    mode: str, kind: str, probe: HardwareProbe, npu_smi: Path, *, timeout: float = 10.0
) -> VnpuTable | None:
    """The backend's vNPU capability, when `--vnpu` asks for it and it has one; npu-smi's
    vNPU commands wait `timeout` seconds at most (--probe-timeout). Chips probed through DCMI
    create and destroy vNPUs through it where the library has the calls (templates still come
    from npu-smi: DCMI lists none)."""
    if mode != "templates":
        return None
    if isinstance(probe, FakeHardware):
        return probe.vnpu_table()
    if kind not in ("npu_smi", "dcmi", "auto"):
        return None
    offers = NpuSmiVnpuTable(npu_smi=npu_smi, timeout=timeout)
    if kind != "npu_smi":
        from npu_dra.adapters.hardware.dcmi.vnpu_choice import dcmi_vnpu_table

        return dcmi_vnpu_table(probe, offers) or offers
    return offers


def vnpu_probe_if_described(
    probe: HardwareProbe, layout: str | None = "same-slice"
) -> HardwareProbe:
    """Fake hardware whose description has `vnpu:` publishes vNPU devices (the simulation), in
    the counter layout the API server keeps (ClusterApi.partitionable_layout: "same-slice",
    "apart", or None: it drops counters, so whole chips only, as the plugin does then)."""
    if layout is None:
        return probe
    if isinstance(probe, FakeHardware) and (table := probe.vnpu_table()) is not None:
        return VnpuProbe(probe, table, counter_slices=layout == "apart")
    return probe
