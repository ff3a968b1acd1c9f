"""NpuSmiVnpuTable: the vNPU capability on a real Ascend node, through npu-smi.

`info -t template-info` (once per process: templates are fixed by the driver), `info -t
info-vnpu -i <card> -c <chip>` (the chip's totals, read once, and its vNPUs, read each time),
`set -t create-vnpu ... -f <template> -v <id>` and `set -t destroy-vnpu ... -v <id>`.
Create and destroy list first, so repeating either is a no-op rather than an npu-smi error.
"""

import threading
from pathlib import Path

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_vnpu import (
    ChipVnpus,
    parse_info_vnpu,
    parse_templates,
)
from npu_dra.adapters.hardware.npu_smi.runner import Command, NpuSmiRunner, describe
from npu_dra.domain.device import Device
from npu_dra.domain.vnpu.instance import Vnpu
from npu_dra.domain.vnpu.templates import Template, VnpuOffer

TEMPLATE_INFO: Command = ("info", "-t", "template-info")
OK_STATUS = "OK"


def info_vnpu(device: Device) -> Command:
    return ("info", "-t", "info-vnpu", "-i", str(device.card_id), "-c", str(device.chip_id))


def create_vnpu(device: Device, template: str, vnpu_id: int) -> Command:
    chip = ("-i", str(device.card_id), "-c", str(device.chip_id))
    return ("set", "-t", "create-vnpu", *chip, "-f", template, "-v", str(vnpu_id))


def destroy_vnpu(device: Device, vnpu_id: int) -> Command:
    chip = ("-i", str(device.card_id), "-c", str(device.chip_id))
    return ("set", "-t", "destroy-vnpu", *chip, "-v", str(vnpu_id))


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
        self._totals: dict[tuple[int, int], dict[str, int]] = {}
        self._lock = threading.Lock()

    def vnpu_offer(self, *, device: Device) -> VnpuOffer | None:
        templates = self._known_templates()
        if not templates:
            return None
        key = (device.card_id, device.chip_id)
        with self._lock:
            totals = self._totals.get(key)
        if totals is None:
            totals = self._info(device).totals
            with self._lock:
                totals = self._totals.setdefault(key, totals)
        return VnpuOffer(totals, templates) if totals else None

    def vnpus(self, *, device: Device) -> tuple[Vnpu, ...]:
        return self._info(device).vnpus

    def create(self, *, device: Device, template: str, vnpu_id: int) -> Vnpu:
        existing = self._find(device, vnpu_id)
        if existing is None:
            self._set(create_vnpu(device, template, vnpu_id))
            existing = self._find(device, vnpu_id)
            if existing is None:
                raise ProbeError(
                    f"`{describe(create_vnpu(device, template, vnpu_id))}` said OK, "
                    f"but `{describe(info_vnpu(device))}` does not list vNPU {vnpu_id}"
                )
        if existing.template != template:
            raise ProbeError(
                f"vNPU {vnpu_id} on chip {device.name} is a {existing.template}, not a {template}"
            )
        return existing

    def destroy(self, *, device: Device, vnpu_id: int) -> None:
        if self._find(device, vnpu_id) is not None:
            self._set(destroy_vnpu(device, vnpu_id))

    def _known_templates(self) -> tuple[Template, ...]:
        if self._templates is None:
            text = self._runner.run(TEMPLATE_INFO, timeout=self._timeout)
            self._templates = parse_templates(text)
        return self._templates

    def _info(self, device: Device) -> ChipVnpus:
        return parse_info_vnpu(self._runner.run(info_vnpu(device), timeout=self._timeout))

    def _find(self, device: Device, vnpu_id: int) -> Vnpu | None:
        return next((v for v in self.vnpus(device=device) if v.vnpu_id == vnpu_id), None)

    def _set(self, command: Command) -> None:
        output = self._runner.run(command, timeout=self._timeout)
        if not status_ok(output):
            first = (output.strip() or "no output").splitlines()[0]
            raise ProbeError(f"`{describe(command)}` failed: {first}")
