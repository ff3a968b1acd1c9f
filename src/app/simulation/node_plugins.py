"""One simulated node's plugin: the publisher it runs from the start, and the preparer and CDI
store it builds when a pod lands on it."""

from collections.abc import Callable

import attrs

from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.ids import NodeName
from npu_dra.domain.ports import CdiStore


@attrs.frozen
class NodeServices:
    preparer: ClaimPreparer
    cdi: CdiStore


@attrs.define
class NodePlugin:
    """One simulated node's plugin: the same services the kubelet plugin runs. Its preparer and
    CDI store are built on first use, so thousands of nodes cost only their publishers."""

    name: NodeName
    publisher: PoolPublisher
    build: Callable[[], NodeServices]
    inventory: InventoryCache | None = None  # for the devices table: health, unpublished NPUs
    _services: NodeServices | None = None

    @property
    def services(self) -> NodeServices:
        if self._services is None:
            self._services = self.build()
        return self._services

    @property
    def built(self) -> bool:
        return self._services is not None
