"""Noticing a kubelet restart: its `kubelet.sock` appears again as a new file.

Polling a stat is enough (the runtime polls a few times a second) and needs no inotify binding;
a new inode or change time means a new socket, so a restart is seen even when the kubelet
deleted and recreated the file between two polls.
"""

import os
from pathlib import Path

Identity = tuple[int, int, int]  # device, inode, ctime in ns


class KubeletSocketWatcher:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen = _identity(path)

    def exists(self) -> bool:
        return _identity(self.path) is not None

    def recreated(self) -> bool:
        """True once for each new `kubelet.sock` since the last call (or since construction)."""
        current = _identity(self.path)
        changed = current is not None and current != self._seen
        self._seen = current
        return changed


def _identity(path: Path) -> Identity | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_ctime_ns
