"""What a shared chip has given out, and whether a claim's shares still fit in it (#44).

A chip's shares come in two forms (domain/chip_sharing/policy.py): fixed share devices, each
1/shares of
the chip, and consumable capacity, each what its allocation consumed. The scheduler counts
only what the node published when it allocated: a change of form (the API server's
DRAConsumableCapacity turned on or off, as a 1.34 -> 1.36 upgrade does) or of `--chip-shares`
while shares are held lets it allocate past the whole chip, and so can a crafted allocation.
So prepare sums, per chip, what every share held of it was given (the checkpoint's record)
with what the claim's own shares ask, and refuses the claim where memory or AI cores pass the
chip's. A share whose memory is not recorded counts as all of it (a request naming no memory
takes all of it: sharing.multi_allocatable); one whose AI cores are not, as none (the default).
"""

from collections.abc import Iterable, Sequence

from npu_dra.domain.checkpoint import HeldShare, Sharers
from npu_dra.domain.chip_sharing.policy import MAX_SHARES, MIN_SHARES, share_of
from npu_dra.domain.chip_sharing.prepared import MIB, ChipUse, Share, fixed_share
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import Device
from npu_dra.domain.errors import PrepareError


def check_given_out(claim: ClaimRef, uses: Sequence[ChipUse], sharers: Sharers) -> None:
    """PrepareError naming the chip and what it has given out where the claim's shares of a
    chip (`uses`, admin access left out) do not fit beside those other claims hold."""
    chips = {use.chip.name: use.chip for use in uses if use.share is not None}
    for name, chip in sorted(chips.items()):
        asked = _sum(chip, (u.share for u in uses if u.chip.name == name and u.share))
        held = [h for h in sharers.held(name) if h.claim != claim.uid]
        given = _sum(chip, (h.share for h in held))
        if _fits(chip, given, asked):
            continue
        raise PrepareError(
            f"claim {claim}: chip {name} has given out {_said(chip, given)} to {len(held)} "
            f"share(s) held by claim(s) {', '.join(sorted({h.claim for h in held})) or '-'}; "
            f"this claim's share(s) of it ask {_said(chip, asked)} more: not prepared"
        )


def held_share_count(chip: Device, held: Iterable[HeldShare]) -> int | None:
    """The fixed share count the chip's held fixed shares were prepared under: the fewest
    shares giving what each records (a chip's memory tells them apart from tens of MiB on);
    None where none is held or no count gives them all (counts mixed)."""
    parts = {h.share for h in held if share_of(h.device) is not None}
    if not parts:
        return None
    for count in range(MIN_SHARES, MAX_SHARES + 1):
        if parts == {fixed_share(chip, count)}:
            return count
    return None


def _sum(chip: Device, shares: Iterable[Share]) -> Share:
    memory, cores = 0, 0
    for share in shares:
        memory += chip.memory_bytes // MIB if share.memory_mib is None else share.memory_mib
        cores += share.aicores or 0
    return Share(memory, cores)


def _fits(chip: Device, given: Share, asked: Share) -> bool:
    total = given + asked
    if total.memory_mib is not None and total.memory_mib > chip.memory_bytes // MIB:
        return False
    cores = chip.aicore_count
    return cores is None or total.aicores is None or total.aicores <= cores


def _said(chip: Device, share: Share) -> str:
    total = chip.aicore_count
    cores = "" if total is None else f" and {share.aicores} of {total} AI cores"
    return f"{share.memory_mib} MiB of its {chip.memory_bytes // MIB} MiB memory{cores}"
