"""Shared chips (`--shared-chips`): which of the node's chips are shared, and in which form.

The form depends on the API server: with consumable capacity (DRAConsumableCapacity) a shared
chip is one multi-allocatable device, else fixed share devices (domain/sharing.py). The server
is asked once, at the first publish that shares a chip of the node: a node sharing nothing,
or whose named chips are all absent, never asks. A failed question decides nothing: the publish
fails and the maintainer's retry asks again, as for device taints.
"""

import logging
import threading
from typing import Protocol, runtime_checkable

from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.sharing import SharingPolicy

log = logging.getLogger(__name__)


@runtime_checkable
class ServesConsumableCapacity(Protocol):
    def serves_consumable_capacity(self, *, node: NodeName, driver: DriverName) -> bool:
        """Whether the API server keeps allowMultipleAllocations and request policies."""
        ...


class SharingMode:
    def __init__(
        self,
        *,
        chips: frozenset[DeviceName] | None,
        shares: int,
        support: object,
        driver: DriverName,
        consumable: bool | None = None,
    ) -> None:
        """`chips` as --shared-chips gives them (None: all); `support` answers
        ServesConsumableCapacity, or cannot: then fixed shares, as without the gate.
        `consumable` given: the answer is known (the simulation's version), nobody is asked."""
        self._policy = SharingPolicy(chips, shares)
        self._support = support if isinstance(support, ServesConsumableCapacity) else None
        self._driver = driver
        if consumable is None and self._support is None:
            consumable = False  # nobody to ask: fixed shares, as without the gate
        self._consumable = consumable
        self._absent: frozenset[DeviceName] = frozenset()
        self._lock = threading.Lock()

    def policy(self, inventory: NodeInventory) -> SharingPolicy | None:
        """The policy to publish `inventory` with; None where none of its chips is shared."""
        with self._lock:
            self._say_absent(inventory)
            if not any(self._policy.shares_chip(d.name) for d in inventory.devices):
                return None
            if self._consumable is None and self._support is not None:
                self._consumable = self._support.serves_consumable_capacity(
                    node=inventory.node, driver=self._driver
                )
                self._say_decided()
            return SharingPolicy(self._policy.chips, self._policy.shares, bool(self._consumable))

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
