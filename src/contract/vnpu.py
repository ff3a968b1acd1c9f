"""The contract of the optional vNPU capability (a VnpuTable), as a pytest class.

A backend that can split chips passes when: its templates and totals give a layout whose
counters add up (a template's placements together fit the chip; the whole chip consumes
exactly its counters), create and destroy are idempotent, an id never holds two templates,
the table lists what was created and forgets what was destroyed, and the hardware refuses a
vNPU beyond what the counters allow, exactly where the published counters say.

Subclass `VnpuContract` next to a `vnpu_backend` fixture returning a `VnpuBackend`.
"""

from collections.abc import Callable

import attrs
import pytest

from npu_dra.domain.device import Device
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ports import VnpuTable
from npu_dra.domain.vnpu.instance import id_range
from npu_dra.domain.vnpu.layout import chip_layout
from npu_dra.domain.vnpu.templates import VnpuOffer


@attrs.frozen
class VnpuBackend:
    name: str
    table: Callable[[], VnpuTable]  # a fresh table with no vNPUs
    chip: Device  # a chip of it that can be split


def rule(holds: bool, name: str, detail: object = "") -> None:
    if not holds:
        pytest.fail(f"vNPU contract rule broken: {name}" + (f": {detail}" if detail else ""))


def _vnpu_offer(table: VnpuTable, chip: Device) -> VnpuOffer:
    vnpu_offer = table.vnpu_offer(device=chip)
    rule(vnpu_offer is not None, "a chip that can be split says how")
    assert vnpu_offer is not None
    rule(bool(vnpu_offer.templates), "a chip that can be split offers templates")
    return vnpu_offer


def _ids(chip: Device) -> range:
    return id_range(chip.physical_id, chip_name=chip.chip_name)


class VnpuContract:
    def test_counters_add_up(self, vnpu_backend: VnpuBackend) -> None:
        chip = vnpu_backend.chip
        vnpu_offer = _vnpu_offer(vnpu_backend.table(), chip)
        layout = chip_layout(chip.name, vnpu_offer)
        rule(
            layout.whole.counters == layout.counter_set.counters,
            "the whole chip consumes all of its counters",
        )
        for template in vnpu_offer.templates:
            parts = [p for p in layout.vnpu_devices if p.template == template]
            for name, total in layout.counter_set.counters.items():
                used = sum(
                    p.consumes.counters[name].value for p in parts if name in p.consumes.counters
                )
                rule(used <= total.value, f"{template.name}'s placements fit the chip's {name}")

    def test_create_is_idempotent_and_listed(self, vnpu_backend: VnpuBackend) -> None:
        table, chip = vnpu_backend.table(), vnpu_backend.chip
        template = _vnpu_offer(table, chip).templates[0].name
        first = table.create(device=chip, template=template, vnpu_id=_ids(chip)[0])
        again = table.create(device=chip, template=template, vnpu_id=_ids(chip)[0])
        rule(first == again, "creating an existing vNPU again returns it", (first, again))
        listed = [v.vnpu_id for v in table.vnpus(device=chip)]
        rule(listed == [_ids(chip)[0]], "the table lists the vNPU once", listed)

    def test_an_id_never_holds_two_templates(self, vnpu_backend: VnpuBackend) -> None:
        table, chip = vnpu_backend.table(), vnpu_backend.chip
        templates = _vnpu_offer(table, chip).templates
        if len(templates) < 2:
            pytest.skip("the backend offers one template")
        table.create(device=chip, template=templates[0].name, vnpu_id=_ids(chip)[0])
        with pytest.raises(DomainError):
            table.create(device=chip, template=templates[1].name, vnpu_id=_ids(chip)[0])
        rule(len(table.vnpus(device=chip)) == 1, "a refused create leaves the table as it was")

    def test_destroy_is_idempotent(self, vnpu_backend: VnpuBackend) -> None:
        table, chip = vnpu_backend.table(), vnpu_backend.chip
        template = _vnpu_offer(table, chip).templates[0].name
        table.create(device=chip, template=template, vnpu_id=_ids(chip)[1])
        table.destroy(device=chip, vnpu_id=_ids(chip)[1])
        table.destroy(device=chip, vnpu_id=_ids(chip)[1])
        table.destroy(device=chip, vnpu_id=_ids(chip)[2])  # never created
        rule(table.vnpus(device=chip) == (), "destroyed vNPUs are gone", table.vnpus(device=chip))

    def test_hardware_refuses_exactly_past_the_counters(self, vnpu_backend: VnpuBackend) -> None:
        table, chip = vnpu_backend.table(), vnpu_backend.chip
        vnpu_offer = _vnpu_offer(table, chip)
        for template in vnpu_offer.templates:
            count = vnpu_offer.placements(template)
            ids = _ids(chip)
            for i in range(count):
                table.create(device=chip, template=template.name, vnpu_id=ids[i])
            with pytest.raises(DomainError):
                table.create(device=chip, template=template.name, vnpu_id=ids[count])
            for i in range(count):
                table.destroy(device=chip, vnpu_id=ids[i])
            rule(table.vnpus(device=chip) == (), f"{template.name}: all destroyed again")
