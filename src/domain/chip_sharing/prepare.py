"""Preparing shares of chips (#31): which chip a result uses, which other claim's hold forbids
it, what its CDI device is named and tells, and which chips need the sharing mode.

A result with a shareID on a chip, or a fixed share device `<chip>-share-<i>`, uses the chip's
device node as a whole-chip result does. Several claims may hold shares of one chip, never the
same fixed share device; a whole chip (no shareID, not a share device) is never held while
another claim holds a share of it, nor a share while another claim holds the whole chip.
Admin access conflicts with nothing, as before.
"""

from collections.abc import Iterable, Mapping

from npu_dra.domain.cdi import cdi_device_name, recorded_share, share_cdi_device_name
from npu_dra.domain.checkpoint import (
    Checkpoint,
    HeldShare,
    PreparedClaim,
    PreparedDevice,
    Sharers,
)
from npu_dra.domain.chip_sharing.budget import held_share_count
from npu_dra.domain.chip_sharing.policy import SharingPolicy, share_of
from npu_dra.domain.chip_sharing.prepared import ChipUse, Share, consumed_share, fixed_share
from npu_dra.domain.claims import AllocationResult
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import ClaimUID, DeviceName, RequestName
from npu_dra.domain.npu_config import is_share
from npu_dra.domain.profile import DeviceProfile

__all__ = ["Sharers", "chip_of", "conflicting_holder", "recorded_uses", "result_use"]


def chip_of(device: DeviceName) -> DeviceName:
    """The chip a result's device stands for: a fixed share device's chip, else itself."""
    share = share_of(device)
    return device if share is None else share[0]


def conflicting_holder(
    result: AllocationResult,
    uid: ClaimUID,
    holders: Mapping[DeviceName, ClaimUID],
    sharers: Sharers,
) -> str | None:
    """Another claim whose hold keeps `result` (of claim `uid`) from being prepared, and how it
    holds the chip; None where none does."""
    chip = chip_of(result.device)
    whole = holders.get(chip)
    if whole is not None and whole != uid:
        return f"{whole} (it holds {chip} whole)"
    if not is_share(result):
        other = next((u for u in sorted(sharers.get(chip, ())) if u != uid), None)
        return None if other is None else f"{other} (it holds a share of {chip})"
    same = holders.get(result.device) if result.device != chip else None
    return None if same is None or same == uid else f"{same} (it holds {result.device})"


def result_use(
    uid: ClaimUID,
    result: AllocationResult,
    chip: Device,
    *,
    sharing: SharingPolicy | None,
    profile: DeviceProfile,
    sharers: Sharers | None = None,
) -> ChipUse:
    """How the container gets `chip` for `result`; PrepareError for a share of a chip this
    node does not share (--shared-chips), or a fixed share it does not publish (in fewer
    shares than the chip's held shares were prepared under, else than --chip-shares)."""
    request = result.request_name
    if not is_share(result):
        return ChipUse(chip, cdi_device_name(uid, chip.name), request)
    if sharing is None or not sharing.shares_chip(chip.name):
        raise PrepareError(f"{chip.name} is not a shared chip on this node (--shared-chips)")
    if result.share_id is not None:
        share = consumed_share(result, memory=profile.memory_capacity)
    else:
        held = (sharers or Sharers()).held(chip.name)
        share = fixed_share(chip, _shares(result.device, chip, sharing, held))
    name = share_cdi_device_name(uid, result.device, result.share_id, share)
    return ChipUse(chip, name, request, share)


def recorded_uses(claim: PreparedClaim, inventory: NodeInventory) -> list[ChipUse]:
    """The chip uses a recorded claim was prepared with, read back from its record (a share's
    part from its CDI device's name); PrepareError for a chip no longer on the node."""
    uses = []
    for prepared in claim.devices:
        chip = inventory.get(prepared.chip)
        if chip is None:
            raise PrepareError(f"device {prepared.device} is no longer on this node")
        request = prepared.request_names[0] if prepared.request_names else RequestName("")
        if not prepared.shares_chip:
            uses.append(ChipUse(chip, cdi_device_name(claim.ref.uid, chip.name), request))
            continue
        name = _recorded_name(claim.ref.uid, prepared)
        uses.append(ChipUse(chip, name, request, recorded_share(name)))
    return uses


def shared_chips(results: Iterable[AllocationResult]) -> frozenset[DeviceName]:
    """The chips `results` hold shares of: those that must be in sharing mode first."""
    return frozenset(chip_of(r.device) for r in results if is_share(r))


def recorded_shared_chips(checkpoint: Checkpoint) -> frozenset[DeviceName]:
    """The chips prepared claims hold shares of (a reboot turns their sharing mode off)."""
    return frozenset(
        d.chip for claim in checkpoint.claims.values() for d in claim.devices if d.shares_chip
    )


def _shares(
    device: DeviceName, chip: Device, sharing: SharingPolicy, held: tuple[HeldShare, ...]
) -> int:
    """The fixed share count `device`'s chip is published in: that of the fixed shares of it
    held, else --chip-shares; PrepareError where `device` is not one of them."""
    share = share_of(device)
    assert share is not None  # is_share without a shareID: a fixed share device
    count = held_share_count(chip, held) or sharing.shares
    if share[1] < count:
        return count
    holding = (
        f": {len(held)} share(s) of that count are held by claim(s) "
        f"{', '.join(sorted({h.claim for h in held}))} (--chip-shares {sharing.shares} applies "
        "once they are released)"
        if count != sharing.shares
        else ""
    )
    raise PrepareError(f"{chip.name} is published in {count} shares on this node{holding}")


def _recorded_name(uid: ClaimUID, prepared: PreparedDevice) -> str:
    """A share's CDI device name as recorded (`<kind>=<name>`)."""
    if not prepared.cdi_ids:
        return share_cdi_device_name(uid, prepared.device, prepared.share_id, Share())
    return prepared.cdi_ids[0].partition("=")[2]
