"""Watches on ResourceSlices in the in-memory API: who is told when a node's slices of a driver
change, told outside the store's writes like a watch stream's reader (memory.py calls notify)."""

import threading
from collections.abc import Callable, Mapping
from typing import Any


class SliceWatch:
    def __init__(
        self, watches: "SliceWatches", node: str, driver: str, on_change: Callable[[], None]
    ) -> None:
        self._watches = watches
        self.node = node
        self.driver = driver
        self.on_change = on_change

    def stop(self) -> None:
        self._watches.remove(self)


class SliceWatches:
    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock  # the store's, so a watch starts between writes, not during one
        self._watches: list[SliceWatch] = []

    def add(self, node: str, driver: str, on_change: Callable[[], None]) -> SliceWatch:
        found = SliceWatch(self, node, driver, on_change)
        with self._lock:
            self._watches.append(found)
        return found

    def remove(self, found: SliceWatch) -> None:
        with self._lock:
            self._watches = [w for w in self._watches if w is not found]

    def notify(self, body: Mapping[str, Any]) -> None:
        """Tell the watches of a written or deleted object's node and driver, if it is a slice."""
        if body.get("kind") != "ResourceSlice":
            return
        spec = body.get("spec") or {}
        with self._lock:
            watches = list(self._watches)
        for w in watches:
            if (w.node, w.driver) == (spec.get("nodeName"), spec.get("driver")):
                w.on_change()
