"""What a prepared device gets of its chip: the whole chip, or a share of a shared chip (#31).

A container given a share is told in its CDI device's env, per physical chip:
`NPU_DRA_DEVICE_<phy>_SHARING=Shared`, `_MEMORY_MIB` and
`_AICORES`: what its allocation consumed (consumable capacity), or a fixed share's part of the
chip (memory // shares in whole MiB, AI cores // shares), each left out where unknown. Nothing
enforces them: without an enforcement layer there is no hard memory limit on a chip.

A container given two shares of one chip gets both CDI devices, and a runtime applying them sets
one value per variable, so the shares of one chip in one request (what a container asks for)
each tell their sum; the chip is one `/dev/davinci<phy>` and is listed once in the visible
devices whatever its shares.
"""

from collections.abc import Sequence

import attrs

from npu_dra.domain.chip_sharing.policy import AICORES
from npu_dra.domain.claims import AllocationResult
from npu_dra.domain.device import Device
from npu_dra.domain.ids import DeviceName, RequestName

MIB = 2**20
ENV_PREFIX = "NPU_DRA_DEVICE_"
SHARED = "Shared"  # a whole chip gets no sharing env: its spec stays as before sharing


@attrs.frozen
class Share:
    """What a share of a chip was given: MiB of memory and AI cores (None: not known)."""

    memory_mib: int | None = None
    aicores: int | None = None

    def __add__(self, other: "Share") -> "Share":
        return Share(_sum(self.memory_mib, other.memory_mib), _sum(self.aicores, other.aicores))


@attrs.frozen
class ChipUse:
    """One allocated device as a container gets it: its chip, the name of its CDI device, the
    request it answers (without a subrequest), and its share (None: the whole chip)."""

    chip: Device
    cdi_name: str
    request: RequestName
    share: Share | None = None


def fixed_share(chip: Device, shares: int) -> Share:
    """One of `shares` fixed shares: as domain/chip_sharing/policy.py publishes it (memory rounded
    down to
    whole MiB)."""
    cores = None if chip.aicore_count is None else chip.aicore_count // shares
    return Share(chip.memory_bytes // shares // MIB, cores)


def consumed_share(result: AllocationResult, *, memory: str) -> Share:
    """What an allocation with a shareID consumed: `memory` (the profile's memory capacity) in
    whole MiB, rounded down, and AI cores; None for what its consumedCapacity does not list."""
    consumed = dict(result.consumed_capacity)
    mem, cores = consumed.get(memory), consumed.get(AICORES)
    return Share(
        None if mem is None else int(mem.value) // MIB, None if cores is None else int(cores.value)
    )


def sharing_env(uses: Sequence[ChipUse]) -> dict[str, tuple[str, ...]]:
    """Each CDI device's sharing env, by its name (module docstring)."""
    totals: dict[tuple[RequestName, DeviceName], Share] = {}
    for use in uses:
        if use.share is not None:
            key = (use.request, use.chip.name)
            totals[key] = totals[key] + use.share if key in totals else use.share
    env: dict[str, tuple[str, ...]] = {}
    for use in uses:
        prefix = f"{ENV_PREFIX}{use.chip.physical_id}_"
        if use.share is None:  # unchanged from before sharing: a whole chip's spec says nothing
            env[use.cdi_name] = ()
            continue
        total = totals[(use.request, use.chip.name)]
        env[use.cdi_name] = (
            f"{prefix}SHARING={SHARED}",
            *([] if total.memory_mib is None else [f"{prefix}MEMORY_MIB={total.memory_mib}"]),
            *([] if total.aicores is None else [f"{prefix}AICORES={total.aicores}"]),
        )
    return env


def _sum(first: int | None, second: int | None) -> int | None:
    return None if first is None or second is None else first + second
