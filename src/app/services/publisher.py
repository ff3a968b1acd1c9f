"""Publishes the node's pool: probe (through the cache), compute slices, sync them to the API."""

import logging

from npu_dra.app.services.chip_sharing.forms import SharingForms
from npu_dra.app.services.device_taints import TaintMode
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.domain.chip_sharing.policy import SharingPolicy
from npu_dra.domain.device import Health, NodeInventory
from npu_dra.domain.device_taints import TaintPolicy
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DriverName
from npu_dra.domain.pool import ResourceSlice, desired_slices
from npu_dra.domain.ports import ClusterApi

log = logging.getLogger(__name__)


class PoolPublisher:
    def __init__(
        self,
        *,
        inventory: InventoryCache,
        cluster: ClusterApi,
        driver: DriverName,
        taints: TaintMode | None = None,
        sharing: SharingForms | None = None,
    ) -> None:
        self._inventory = inventory
        self._cluster = cluster
        self._driver = driver
        self._taints = taints  # None: unusable devices are left out (no taints)
        self._sharing = sharing  # None: no chip is shared
        self._published_sharing: SharingPolicy | None = None

    def publish(self, *, refresh: bool = True) -> tuple[ResourceSlice, ...]:
        current = self._inventory.refresh() if refresh else self._inventory.current()
        taints = self._taint_policy(current)
        sharing = self._sharing.policy(current) if self._sharing is not None else None
        desired = desired_slices(
            current, driver=self._driver, generation=0, taints=taints, sharing=sharing
        )
        stored = self._cluster.publish_pool(node=current.node, driver=self._driver, slices=desired)
        self._published_sharing = sharing
        devices = sum(len(s.devices) for s in stored)
        log.info("published pool %s: %d slice(s), %d device(s)", current.node, len(stored), devices)
        return stored

    def _taint_policy(self, inventory: NodeInventory) -> TaintPolicy | None:
        """The taint policy, asked of the API server only once a device is not healthy: no
        device of a healthy pool carries a taint, so its slices are the same either way, and a
        start on healthy hardware publishes without waiting for the question (issue 49)."""
        if self._taints is None or all(d.health is Health.HEALTHY for d in inventory.devices):
            return None
        return self._taints.policy(inventory.node)

    def sharing_changed(self) -> bool:
        """Whether the shared chips' forms differ from those last published: claims holding a
        chip in another form than the flags' were released (app/services/chip_sharing/forms.py)."""
        if self._sharing is None:
            return False
        try:
            return self._sharing.policy(self._inventory.current()) != self._published_sharing
        except DomainError:  # no inventory, or the API server did not answer: publish to see
            return True
