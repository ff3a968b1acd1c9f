"""NpuSmiSharingMode: a chip's container-sharing mode through npu-smi (adapters/hardware/
device_share.py says why and which chips).

`npu-smi info -t device-share -i <card> -c <chip>` says whether it is on (`Device-share Status :
True|False`); only where it is off is it set, `npu-smi set -t device-share -i <card> -c <chip>
-d 1`, which asks "Are you sure you want to continue setting?(Y/N)" on stdin first (answered `Y`,
as HAMi's DRA driver does) and prints `Status : OK`. Formats from npu-smi's source
(verylucky01/driver @ e29d066f, src/custom/dev_prod/user/npucli/src: npu_chip_info.c
show_ascend_chip_device_share_info, npu_chip_set.c set_chip_share, npu_set_print.c
show_device_share_risk and print_result). On A3 setting one die sets its card's two ("all chips
belong to the npu card will keep same device-share status"). Either command can answer "This
device does not support ... device-share.": SharingModeUnsupported.
"""

from pathlib import Path

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.lines import clipped
from npu_dra.adapters.hardware.npu_smi.runner import (
    UNSUPPORTED,
    Command,
    CommandDone,
    NpuSmiRunner,
    describe,
)
from npu_dra.adapters.hardware.npu_smi.vnpu import status_ok
from npu_dra.adapters.hardware.sharing_mode import SharingModeUnsupported
from npu_dra.domain.device import Device

STATUS_KEY = "Device-share Status"
STATES = {"True": True, "False": False}
YES = "Y\n"
NOT_SUPPORTED = "does not support"


def query_device_share(device: Device) -> Command:
    return ("info", "-t", "device-share", "-i", str(device.card_id), "-c", str(device.chip_id))


def set_device_share(device: Device) -> Command:
    chip = ("-i", str(device.card_id), "-c", str(device.chip_id))
    return ("set", "-t", "device-share", *chip, "-d", "1")


class NpuSmiSharingMode:
    def __init__(
        self, *, npu_smi: Path, timeout: float = 10.0, on_done: CommandDone | None = None
    ) -> None:
        self._runner = NpuSmiRunner(path=npu_smi, on_done=on_done)
        self._timeout = timeout

    def enable_device_share(self, *, device: Device) -> bool:
        if self._is_on(device):
            return False
        command = set_device_share(device)
        try:
            output = self._runner.run(command, timeout=self._timeout, answer=YES)
        except ProbeError as error:
            if NOT_SUPPORTED in str(error):
                raise SharingModeUnsupported(device, f"`{describe(command)}`: {error}") from None
            raise ProbeError(f"{device.name}: {error}") from None
        if not status_ok(output):
            said = next((s for s in output.splitlines() if "Message" in s), "no Status : OK")
            raise ProbeError(f"{device.name}: `{describe(command)}` failed: {clipped(said)}")
        return True

    def _is_on(self, device: Device) -> bool:
        command = query_device_share(device)
        try:
            output = self._runner.run(command, timeout=self._timeout)
        except ProbeError as error:
            raise ProbeError(f"{device.name}: {error}") from None
        if UNSUPPORTED in output:
            said = clipped(output.strip().splitlines()[0])
            raise SharingModeUnsupported(device, f"`{describe(command)}`: {said}")
        return _status(output, command, device)


def _status(output: str, command: Command, device: Device) -> bool:
    """`\\tDevice-share Status            : True`; ProbeError naming the chip and the command
    otherwise."""
    for line in output.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == STATUS_KEY and value.strip() in STATES:
            return STATES[value.strip()]
    first = clipped((output.strip() or "no output").splitlines()[0])
    said = f"`{describe(command)}`: no {STATUS_KEY} True or False in: {first}"
    raise ProbeError(f"{device.name}: {said}")
