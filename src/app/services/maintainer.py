"""Keeps the published pool true: re-probes hardware every interval (health changes) and
republishes at once when the API tells us our slices were changed or deleted by someone else.

One worker thread does every publish, so probes and syncs never overlap; wake-ups that arrive
while it works are merged into one more sync.
"""

import logging
import threading
from collections.abc import Iterator

from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.ports import SliceWatcher

log = logging.getLogger(__name__)


class PoolMaintainer:
    def __init__(
        self, *, inventory: InventoryCache, publisher: PoolPublisher, interval_s: float
    ) -> None:
        self._inventory = inventory
        self._publisher = publisher
        self._interval = interval_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="pool-maintainer", daemon=True)
        self._thread.start()

    def request_sync(self) -> None:
        """Republish soon (the stored slices may differ from ours); safe from any thread."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            woken = self._wake.wait(self._interval)
            if self._stop.is_set():
                return
            self._wake.clear()
            self._tick(resync=woken)

    def _tick(self, *, resync: bool) -> None:
        try:
            before = self._inventory.current()
            after = self._inventory.refresh() if not resync else before
            if resync or after != before:
                self._publisher.publish(refresh=False)
        except DomainError as error:  # keep serving with the last good inventory
            log.error("keeping the pool as it is: %s", error)


def maintained_pool(
    *, maintainer: PoolMaintainer, watcher: SliceWatcher, node: NodeName, driver: DriverName
) -> Iterator[PoolMaintainer]:
    """A DI resource: maintenance and the slice watch run until the container shuts down."""
    maintainer.start()
    watch = watcher.watch_slices(node=node, driver=driver, on_change=maintainer.request_sync)
    try:
        yield maintainer
    finally:
        watch.stop()
        maintainer.stop()
