"""An in-memory vNPU table with npu-smi's rules, for fake hardware (tests, simulate, demos).

Like the driver: a vNPU id is unique host-wide and must lie in its chip's range; a chip holds
vNPUs only while the sum of their templates stays within its totals; creating an existing id
with the same template is a no-op, with another template an error; destroying a missing id is
a no-op (npu-smi itself fails there; the port promises idempotence, the adapter provides it).
"""

import threading
from collections.abc import Mapping

import attrs

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.domain.device import Device
from npu_dra.domain.vnpu.instance import Vnpu, id_range
from npu_dra.domain.vnpu.templates import VnpuOffer


def over_totals(vnpu_offer: VnpuOffer, templates: list[str]) -> list[str]:
    """The counters the named templates together take more of than the chip has."""
    used: dict[str, int] = {}
    for name in templates:
        template = vnpu_offer.template(name)
        if template is None:
            raise ProbeError(f"create vnpu failed: no template {name!r}")
        for key, value in template.consumed().items():
            used[key] = used.get(key, 0) + value
    totals = vnpu_offer.counters()
    return sorted(k for k, v in used.items() if v > totals.get(k, 0))


class FakeVnpuTable:
    def __init__(self, vnpu_offer: VnpuOffer) -> None:
        self._vnpu_offer = vnpu_offer
        self._table: dict[int, dict[int, Vnpu]] = {}  # physical id -> vNPU id -> vNPU
        self._lock = threading.Lock()

    def vnpu_offer(self, *, device: Device) -> VnpuOffer | None:
        """The described offer, with as many placements per template as the chip has ids."""
        ids = len(id_range(device.physical_id, chip_name=device.chip_name))
        return (
            self._vnpu_offer
            if ids == self._vnpu_offer.ids
            else attrs.evolve(self._vnpu_offer, ids=ids)
        )

    def vnpus(self, *, device: Device) -> tuple[Vnpu, ...]:
        with self._lock:
            return tuple(sorted(self._table.get(device.physical_id, {}).values(), key=_id))

    def create(self, *, device: Device, template: str, vnpu_id: int) -> Vnpu:
        with self._lock:
            chip = self._table.setdefault(device.physical_id, {})
            existing = chip.get(vnpu_id)
            if existing is not None:
                if existing.template != template:
                    raise ProbeError(
                        f"create vnpu failed: vNPU {vnpu_id} exists as {existing.template}"
                    )
                return existing
            self._check(device, chip, template, vnpu_id)
            created = Vnpu(vnpu_id, template, len(chip))
            chip[vnpu_id] = created
            return created

    def destroy(self, *, device: Device, vnpu_id: int) -> None:
        with self._lock:
            self._table.get(device.physical_id, {}).pop(vnpu_id, None)

    def all_ids(self) -> Mapping[int, tuple[int, ...]]:
        with self._lock:
            return {phy: tuple(sorted(chip)) for phy, chip in self._table.items()}

    def _check(self, device: Device, chip: dict[int, Vnpu], template: str, vnpu_id: int) -> None:
        if vnpu_id not in id_range(device.physical_id, chip_name=device.chip_name):
            raise ProbeError(
                f"create vnpu failed: id {vnpu_id} is not in chip {device.physical_id}'s range"
            )
        if any(vnpu_id in other for other in self._table.values()):
            raise ProbeError(f"create vnpu failed: id {vnpu_id} is in use")
        over = over_totals(self._vnpu_offer, [*(v.template for v in chip.values()), template])
        if over:
            raise ProbeError(
                f"create vnpu failed: not enough {', '.join(over)} on chip {device.physical_id}"
            )


def _id(vnpu: Vnpu) -> int:
    return vnpu.vnpu_id
