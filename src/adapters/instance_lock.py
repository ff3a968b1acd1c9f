"""InstanceLock: serializes state changes across the plugin instances on one node.

During a seamless upgrade an old and a new plugin pod serve side by side over one data
directory (checkpoint, CDI specs); the kubelet may send a claim's prepare to one and its
unprepare to the other. Each state change (a prepare, an unprepare, a repair) holds this lock
from start to saved: a thread lock for this process's threads, then an exclusive flock(2) on
`serialize.lock` in the data directory for the other process (the Go kubeletplugin helper's
file, k8s.io/dynamic-resource-allocation kubeletplugin). The kernel drops a flock when its
holder dies, so a killed instance never leaves it held.

The lock file is opened once, never through a link, and created root-only, with the data
directory if it is not there yet (the first start on a node takes the lock before serving).
"""

import fcntl
import os
import threading
from pathlib import Path
from types import TracebackType

from npu_dra.adapters.atomic import ensure_dir
from npu_dra.domain.errors import StateError

LOCK_MODE = 0o600
DIR_MODE = 0o700  # the plugin's data dir: the checkpoint and the DRA socket, root only


class InstanceLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._threads = threading.Lock()
        self._fd: int | None = None

    def __enter__(self) -> "InstanceLock":
        self._threads.acquire()
        try:
            fcntl.flock(self._file(), fcntl.LOCK_EX)
        except OSError as error:
            self._threads.release()
            raise StateError(f"instance lock {self.path}: {error}") from error
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._threads.release()

    def _file(self) -> int:
        if self._fd is None:
            ensure_dir(self.path.parent, mode=DIR_MODE)
            flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
            self._fd = os.open(self.path, flags, LOCK_MODE)
        return self._fd
