"""The node's last known inventory.

Prepare paths read it from memory and never run npu-smi; only refresh() probes hardware, from the
publisher at start and from the periodic health loop.

`prefetch()` starts the first probe in the background (the kubelet plugin calls it first thing
at start), so npu-smi runs while the process imports and starts its gRPC servers instead of after
them. Whoever asks for the inventory meanwhile waits for that probe; if it failed, `current()`
probes again itself, so a probe error reaches its caller exactly as without the prefetch.
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
        self._prefetched: threading.Event | None = None

    def prefetch(self) -> None:
        """Start the first probe in the background (once; no-op if one already ran)."""
        with self._lock:
            if self._prefetched is not None or self._current is not None:
                return
            done = self._prefetched = threading.Event()

        def first_probe() -> None:
            try:
                self.refresh()
            except Exception as error:  # current() probes again and raises it to its caller
                log.debug("the prefetched probe failed: %s", error)
            finally:
                done.set()

        threading.Thread(target=first_probe, name="inventory-prefetch", daemon=True).start()

    def current(self) -> NodeInventory:
        with self._lock:
            if self._current is not None:
                return self._current
            prefetched = self._prefetched
        if prefetched is not None:
            prefetched.wait()
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
