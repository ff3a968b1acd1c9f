"""The node's last known inventory.

Prepare paths read it from memory and never run npu-smi; only refresh() probes hardware, from the
publisher at start and from the periodic health loop.
"""

import logging
import threading

from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ports import HardwareProbe

log = logging.getLogger(__name__)


class InventoryCache:
    def __init__(self, probe: HardwareProbe) -> None:
        self._probe = probe
        self._current: NodeInventory | None = None
        self._lock = threading.Lock()

    def current(self) -> NodeInventory:
        with self._lock:
            if self._current is not None:
                return self._current
        return self.refresh()

    def refresh(self) -> NodeInventory:
        """Probe again; on failure the previous inventory stays and the error propagates."""
        fresh = self._probe.probe()
        with self._lock:
            changed = self._current != fresh
            self._current = fresh
        if changed:
            log.info("inventory of %s: %d device(s)", fresh.node, len(fresh.devices))
        return fresh
