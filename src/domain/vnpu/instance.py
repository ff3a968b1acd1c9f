"""A vNPU as npu-smi lists it, and the id rules for creating one (ascend-facts A.7).

vNPU ids are host-wide; on chip `phy` npu-smi accepts ids in [phy*16+100, phy*16+115]
(training/910B) or [.., phy*16+107] (inference 310P). Choosing the id ourselves, and recording
it before `create-vnpu` runs, is what makes creation idempotent across a crash: a retry or a
restart creates (or finds) the same vNPU instead of a second one.
"""

from collections.abc import Iterable

import attrs

from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import DeviceName

ID_BASE = 100
IDS_PER_CHIP = 16
IDS_PER_CHIP_310P = 8


@attrs.frozen
class Vnpu:
    vnpu_id: int
    template: str
    vgroup: int | None = None
    in_use: bool = False  # bound to a running container (Status 1)


@attrs.frozen
class VnpuRecord:
    """What the checkpoint keeps of a claim's vNPU: enough to find, recreate or destroy it."""

    vnpu_id: int
    chip: DeviceName
    template: str


def id_range(physical_id: int, *, chip_name: str) -> range:
    per_chip = IDS_PER_CHIP_310P if chip_name.startswith("310P") else IDS_PER_CHIP
    first = ID_BASE + physical_id * IDS_PER_CHIP
    return range(first, first + per_chip)


def free_id(physical_id: int, *, chip_name: str, taken: Iterable[int]) -> int:
    """The lowest id of the chip's range not in `taken`; PrepareError when all are."""
    used = set(taken)
    for candidate in id_range(physical_id, chip_name=chip_name):
        if candidate not in used:
            return candidate
    raise PrepareError(f"no free vNPU id left on chip {physical_id}")
