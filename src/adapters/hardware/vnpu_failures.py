"""What a failed vNPU create or destroy means, for every backend that calls the driver (npu-smi,
DCMI): the port promises idempotence, the driver does not, so a failed call is explained by
listing the chip. A vNPU already there with the asked template was created; one already gone
was destroyed; anything else is the call's failure (with the listing's, if that failed too)."""

from collections.abc import Callable

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.lines import clipped
from npu_dra.domain.device import Device
from npu_dra.domain.errors import DomainError
from npu_dra.domain.vnpu.instance import Vnpu


def listed_after(
    failure: ProbeError, vnpus: Callable[[], tuple[Vnpu, ...]], vnpu_id: int
) -> Vnpu | None:
    """The vNPU as the chip lists it now (None: not there); a chip that cannot be listed
    either raises the call's failure, with the listing's."""
    try:
        listed = vnpus()
    except DomainError as error:
        raise ProbeError(f"{failure}; and listing the chip failed: {error}") from error
    return next((v for v in listed if v.vnpu_id == vnpu_id), None)


def created_anyway(
    failure: ProbeError, existing: Vnpu | None, device: Device, vnpu_id: int, template: str
) -> None:
    """Return if the failed create's vNPU is there as asked; else raise why not."""
    if existing is None:
        raise failure
    if existing.template != template:
        raise ProbeError(
            f"vNPU {vnpu_id} on chip {device.name} is a {clipped(existing.template)}, "
            f"not a {template}"
        ) from failure
