"""NpuSmiVnpuTable: the vNPU capability on a real Ascend node, through npu-smi.

`info -t template-info` (once per process: templates are fixed by the driver), `info -t
info-vnpu -i <card> -c <chip>` (the chip's totals, read once, and its vNPUs, read each time),
`set -t create-vnpu ... -f <template> -v <id>` and `set -t destroy-vnpu ... -v <id>`.
A create or a destroy is one `set` call: npu-smi's own answer says whether it worked. Only
when it did not is the chip's info-vnpu read, to keep the port's idempotence (the vNPU is
already there with that template: created; it is already gone: destroyed); a failure that the
listing does not explain is raised with npu-smi's first line. So a caller that knows the free
ids (app/services/vnpu.py keeps them) pays one npu-smi call per create and per destroy.

What npu-smi offers is vetted (domain/vnpu/vetting.py) before it is offered: a template or a
chip's totals that make no good devices are left out and logged once, when first read; the
other templates, and the whole chips, are still offered.
"""

import logging
import threading
from collections.abc import Iterable
from pathlib import Path

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.lines import clipped
from npu_dra.adapters.hardware.npu_smi.parse_vnpu import (
    ChipVnpus,
    parse_info_vnpu,
    read_templates,
)
from npu_dra.adapters.hardware.npu_smi.runner import Command, NpuSmiRunner, describe
from npu_dra.adapters.hardware.vnpu_failures import created_anyway, listed_after
from npu_dra.domain.device import Device
from npu_dra.domain.vnpu.instance import Vnpu, id_range
from npu_dra.domain.vnpu.templates import Template, VnpuOffer
from npu_dra.domain.vnpu.vetting import vet_offer, vet_templates

TEMPLATE_INFO: Command = ("info", "-t", "template-info")
OK_STATUS = "OK"
log = logging.getLogger(__name__)


def info_vnpu(device: Device) -> Command:
    return ("info", "-t", "info-vnpu", "-i", str(device.card_id), "-c", str(device.chip_id))


def create_vnpu(device: Device, template: str, vnpu_id: int) -> Command:
    chip = ("-i", str(device.card_id), "-c", str(device.chip_id))
    return ("set", "-t", "create-vnpu", *chip, "-f", template, "-v", str(vnpu_id))


def destroy_vnpu(device: Device, vnpu_id: int) -> Command:
    chip = ("-i", str(device.card_id), "-c", str(device.chip_id))
    return ("set", "-t", "destroy-vnpu", *chip, "-v", str(vnpu_id))


def _report(problems: Iterable[str]) -> None:
    for problem in problems:
        log.warning("vNPU offer: %s", problem)


def status_ok(output: str) -> bool:
    """`\\tStatus : OK` in a set command's answer."""
    for line in output.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Status":
            return value.strip() == OK_STATUS
    return False


class NpuSmiVnpuTable:
    def __init__(self, *, npu_smi: Path, timeout: float = 10.0) -> None:
        self._runner = NpuSmiRunner(path=npu_smi)
        self._timeout = timeout
        self._templates: tuple[Template, ...] | None = None
        self._offers: dict[tuple[int, int], VnpuOffer | None] = {}
        self._lock = threading.Lock()

    def vnpu_offer(self, *, device: Device) -> VnpuOffer | None:
        """The chip's vetted offer, read once per chip: its totals and the templates that make
        good devices on it; what was left out is logged once, here."""
        templates = self._known_templates()
        if not templates:
            return None
        key = (device.card_id, device.chip_id)
        with self._lock:
            if key in self._offers:
                return self._offers[key]
        ids = len(id_range(device.physical_id, chip_name=device.chip_name))
        vetted = vet_offer(device.name, self._info(device).totals, templates, ids=ids)
        with self._lock:
            if key in self._offers:
                return self._offers[key]
            self._offers[key] = offer = (
                vetted.offer if vetted.offer and vetted.offer.totals else None
            )
        _report(vetted.problems)
        return offer

    def vnpus(self, *, device: Device) -> tuple[Vnpu, ...]:
        return self._info(device).vnpus

    def create(self, *, device: Device, template: str, vnpu_id: int) -> Vnpu:
        try:
            self._set(create_vnpu(device, template, vnpu_id))
        except ProbeError as error:
            existing = self._find(device, vnpu_id, error)
            created_anyway(error, existing, device, vnpu_id, template)
        return Vnpu(vnpu_id, template)

    def destroy(self, *, device: Device, vnpu_id: int) -> None:
        try:
            self._set(destroy_vnpu(device, vnpu_id))
        except ProbeError as error:
            if self._find(device, vnpu_id, error) is not None:
                raise

    def _known_templates(self) -> tuple[Template, ...]:
        """template-info's templates, read (and what was left out of them logged) once."""
        if self._templates is None:
            reading = read_templates(self._runner.run(TEMPLATE_INFO, timeout=self._timeout))
            vetted = vet_templates(reading.templates)
            with self._lock:
                if self._templates is not None:
                    return self._templates
                self._templates = vetted.templates
            _report([*(f"{e}; left out" for e in reading.problems), *vetted.problems])
        return self._templates

    def _info(self, device: Device) -> ChipVnpus:
        return parse_info_vnpu(self._runner.run(info_vnpu(device), timeout=self._timeout))

    def _find(self, device: Device, vnpu_id: int, failure: ProbeError) -> Vnpu | None:
        return listed_after(failure, lambda: self.vnpus(device=device), vnpu_id)

    def _set(self, command: Command) -> None:
        output = self._runner.run(command, timeout=self._timeout)
        if not status_ok(output):
            first = (output.strip() or "no output").splitlines()[0]
            raise ProbeError(f"`{describe(command)}` failed: {clipped(first)}")
