"""The form a chip is published in while prepared claims hold it (#44).

The scheduler counts a chip's shares only in the form it finds published: fixed share devices,
or one multi-allocatable device whose allocations consume capacity (domain/chip_sharing/policy.py).
Were a
chip published in another form, or in another count of fixed shares, while shares of it are
held, the scheduler would give it out again beside them: 200 % of the chip after consumable
capacity is turned on or off (an upgrade), 150 % after `--chip-shares` 4 -> 8. So the form
held decides until it is released:

- fixed shares held: the chip stays published in their count (held_share_count);
- consumable shares held: the chip stays multi-allocatable where the API server serves it, and
  is withheld (not published) where it no longer does;
- a chip the flags no longer share, or held in both forms or in mixed counts: withheld;
- a shared chip held whole: published whole (the scheduler sees it allocated).

Prepare checks the sum either way (domain/chip_sharing/budget.py); this keeps the scheduler from
allocating what prepare would refuse.
"""

from collections.abc import Mapping

from npu_dra.domain.checkpoint import HeldShare, Sharers
from npu_dra.domain.chip_sharing.budget import held_share_count
from npu_dra.domain.chip_sharing.policy import (
    CONSUMABLE,
    FIXED,
    WHOLE,
    WITHHELD,
    ChipForm,
    SharingPolicy,
)
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.ids import ClaimUID, DeviceName


def held_forms(
    policy: SharingPolicy,
    inventory: NodeInventory,
    sharers: Sharers,
    holders: Mapping[DeviceName, ClaimUID],
) -> dict[DeviceName, ChipForm]:
    """The form of each chip of `inventory` whose prepared claims decide it (module docstring),
    given `policy` (the flags and the API server's answer) and the checkpoint's holds."""
    forms: dict[DeviceName, ChipForm] = {}
    for chip in inventory.devices:
        form = _held_form(chip, policy, sharers.held(chip.name), chip.name in holders)
        if form is not None and form != policy.configured_form(chip.name):
            forms[chip.name] = form
    return forms


def _held_form(
    chip: Device, policy: SharingPolicy, held: tuple[HeldShare, ...], whole: bool
) -> ChipForm | None:
    if not held:
        return ChipForm(WHOLE) if whole and policy.shares_chip(chip.name) else None
    if not policy.shares_chip(chip.name):
        return ChipForm(WITHHELD)
    consumable = [h for h in held if h.device == chip.name]  # a shareID: the chip itself
    if consumable:
        both = len(consumable) < len(held)
        return ChipForm(CONSUMABLE) if policy.consumable and not both else ChipForm(WITHHELD)
    count = held_share_count(chip, held)
    return ChipForm(WITHHELD) if count is None else ChipForm(FIXED, count)
