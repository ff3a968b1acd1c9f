"""Shared chips (`--shared-chips`): which of the node's chips are shared, and in which form.

The form depends on the API server: with consumable capacity (DRAConsumableCapacity) a shared
chip is one multi-allocatable device, else fixed share devices (domain/chip_sharing/policy.py). The
server
is asked once, at the first publish that shares a chip of the node: a node sharing nothing,
or whose named chips are all absent, never asks. A failed question decides nothing: the publish
fails and the maintainer's retry asks again, as for device taints.

What prepared claims hold of a chip decides its form until they are released, whatever the
flags or the server say now (domain/chip_sharing/held_forms.py): the maintainer republishes once
they are.
"""

import logging
import threading
from typing import Protocol, runtime_checkable

import attrs

from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.chip_sharing.held_forms import held_forms
from npu_dra.domain.chip_sharing.policy import FIXED, WITHHELD, ChipForm, SharingPolicy
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import DeviceName, DriverName, NodeName

log = logging.getLogger(__name__)


class HeldClaims(Protocol):
    def prepared(self) -> Checkpoint:
        """The claims prepared on the node (the preparer's checkpoint)."""
        ...


@runtime_checkable
class ServesConsumableCapacity(Protocol):
    def serves_consumable_capacity(self, *, node: NodeName, driver: DriverName) -> bool:
        """Whether the API server keeps allowMultipleAllocations and request policies."""
        ...


class SharingForms:
    def __init__(
        self,
        *,
        chips: frozenset[DeviceName] | None,
        shares: int,
        support: object,
        driver: DriverName,
        consumable: bool | None = None,
        held: HeldClaims | None = None,
    ) -> None:
        """`chips` as --shared-chips gives them (None: all); `support` answers
        ServesConsumableCapacity, or cannot: then fixed shares, as without the gate.
        `consumable` given: the answer is known (the simulation's version), nobody is asked.
        `held`: the prepared claims (None: none are ever held, as in the simulation)."""
        self._policy = SharingPolicy(chips, shares)
        self._held = held
        self._support = support if isinstance(support, ServesConsumableCapacity) else None
        self._driver = driver
        if consumable is None and self._support is None:
            consumable = False  # nobody to ask: fixed shares, as without the gate
        self._consumable = consumable
        self._absent: frozenset[DeviceName] = frozenset()
        self._said_forms: dict[DeviceName, ChipForm] = {}  # the held forms last logged
        self._lock = threading.Lock()

    def policy(self, inventory: NodeInventory) -> SharingPolicy | None:
        """The policy to publish `inventory` with; None where none of its chips is shared
        and no prepared claim holds a share of one."""
        held = self._held.prepared() if self._held is not None else Checkpoint()
        sharers = held.sharers()
        with self._lock:
            self._say_absent(inventory)
            if not any(self._policy.shares_chip(d.name) for d in inventory.devices):
                if not sharers:
                    return None
            elif self._consumable is None and self._support is not None:
                self._consumable = self._support.serves_consumable_capacity(
                    node=inventory.node, driver=self._driver
                )
                self._say_decided()
            policy = attrs.evolve(self._policy, consumable=bool(self._consumable))
        forms = held_forms(policy, inventory, sharers, held.holders())
        with self._lock:
            said, self._said_forms = self._said_forms, forms
        for name, form in sorted(forms.items()):
            if said.get(name) != form:
                log.info("%s stays published %s until its claims are released", name, _said(form))
        return attrs.evolve(policy, held=forms)

    def _say_absent(self, inventory: NodeInventory) -> None:
        """One warning each time the named chips the node lacks change."""
        absent = self._policy.absent(d.name for d in inventory.devices)
        if absent != self._absent and absent:
            log.warning(
                "--shared-chips names chips node %s does not have: %s",
                inventory.node,
                ", ".join(sorted(absent)),
            )
        self._absent = absent

    def _say_decided(self) -> None:
        if self._consumable:
            log.info("shared chips: published with consumable capacity, one device each")
        else:
            log.warning(
                "the API server does not keep allowMultipleAllocations (DRAConsumableCapacity "
                "off?): each shared chip is published as %d fixed share devices instead",
                self._policy.shares,
            )


def _said(form: ChipForm) -> str:
    return {FIXED: f"in {form.shares} fixed shares", WITHHELD: "nowhere"}.get(
        form.kind, f"as {form.kind}"
    )
