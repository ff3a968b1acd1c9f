"""The hardware's optional partitioning capability: vNPU templates, and creating, listing and
destroying vNPUs on a chip. A backend that cannot split chips simply has no such port."""

from typing import Protocol

from npu_dra.domain.device import Device
from npu_dra.domain.partitions.templates import ChipSlicing
from npu_dra.domain.partitions.vnpu import Vnpu


class VnpuTable(Protocol):
    def slicing(self, *, device: Device) -> ChipSlicing | None:
        """The chip's totals and templates; None when it cannot be split."""
        ...

    def vnpus(self, *, device: Device) -> tuple[Vnpu, ...]:
        """The vNPUs that exist on the chip now."""
        ...

    def create(self, *, device: Device, template: str, vnpu_id: int) -> Vnpu:
        """Create vNPU `vnpu_id` of `template` on the chip. Idempotent: if it exists with that
        template it is returned; with another template, or if the chip lacks room, raises."""
        ...

    def destroy(self, *, device: Device, vnpu_id: int) -> None:
        """Destroy the vNPU; destroying one that does not exist is not an error."""
        ...
