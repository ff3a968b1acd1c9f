"""An in-memory DaemonSetWatcher: DaemonSets that tests apply, mark for deletion and delete, and
the reports a watch on one of them gives (synchronously, on the caller's thread)."""

import threading
from collections.abc import Callable

Key = tuple[str, str]  # (namespace, name)


class MemoryDaemonSets:
    def __init__(self) -> None:
        self._standing: dict[Key, bool] = {}  # False: being deleted
        self._watches: list[_Watch] = []
        self._lock = threading.Lock()

    def apply(self, namespace: str, name: str) -> None:
        self._set((namespace, name), True)

    def mark_deleted(self, namespace: str, name: str) -> None:
        """A deletion the garbage collector has not finished (foreground): deletionTimestamp."""
        self._set((namespace, name), False)

    def delete(self, namespace: str, name: str) -> None:
        with self._lock:
            self._standing.pop((namespace, name), None)
        self._notify((namespace, name), False)

    def watch_daemonset(
        self, *, namespace: str, name: str, on_report: Callable[[bool], None]
    ) -> "_Watch":
        found = _Watch(self, (namespace, name), on_report)
        with self._lock:
            self._watches.append(found)
            now = self._standing.get(found.key, False)
        on_report(now)
        return found

    def _set(self, key: Key, standing: bool) -> None:
        with self._lock:
            self._standing[key] = standing
        self._notify(key, standing)

    def _notify(self, key: Key, standing: bool) -> None:
        with self._lock:
            watches = [w for w in self._watches if w.key == key]
        for found in watches:
            found.on_report(standing)

    def _unwatch(self, found: "_Watch") -> None:
        with self._lock:
            self._watches = [w for w in self._watches if w is not found]


class _Watch:
    def __init__(
        self, owner: MemoryDaemonSets, key: Key, on_report: Callable[[bool], None]
    ) -> None:
        self._owner, self.key, self.on_report = owner, key, on_report

    def stop(self) -> None:
        self._owner._unwatch(self)
