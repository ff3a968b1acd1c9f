"""Waiting for a change to our socket files without polling: Linux inotify on their directories.

A serving plugin is idle most of its life, and checking its socket files every second costs it
CPU all day (issue 13). With inotify the waiting thread sleeps until a file in a socket's
directory is created, deleted or moved, or the directory itself goes; `wait` then returns and
the caller checks its sockets. Where inotify cannot be had (another OS, the per-user limits on
instances or watches used up) or a directory does not exist yet, `wait` falls back to sleeping
`poll_s`, as the loop did before; the fallback is logged once.
"""

import ctypes
import errno
import logging
import os
import select
import threading
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
MASK = IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_MOVED_FROM | IN_MOVED_TO
READ_SIZE = 64 * 1024


class SocketWatch:
    """Wakes `wait` when a file in the directories of `paths` changes, or on `close`."""

    def __init__(self, paths: Iterable[Path], *, poll_s: float = 1.0) -> None:
        self._dirs = tuple(dict.fromkeys(p.parent for p in paths))
        self._poll_s = poll_s
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._closed = threading.Event()
        self._libc = _libc()
        self._fd = self._init()
        self._watching: set[Path] = set()
        if self._fd is not None and self._libc is not None:
            self._watch_all(self._fd, self._libc)  # now: a change from here on wakes `wait`

    @property
    def uses_inotify(self) -> bool:
        return self._fd is not None

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a watched directory changed (True), or `close`, `timeout` or the polling
        fallback's interval passed (False)."""
        if self._closed.is_set():
            return False
        fd, libc = self._fd, self._libc
        if fd is None or libc is None or not self._watch_all(fd, libc):
            limit = self._poll_s if timeout is None else min(timeout, self._poll_s)
            self._closed.wait(limit)
            return False
        ready, _, _ = select.select([fd, self._wake_r], [], [], timeout)
        if fd not in ready:
            return False
        self._drain(fd)
        self._watching.clear()  # a directory that went is watched again once it is back
        return True

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        os.write(self._wake_w, b"x")

    def release(self) -> None:
        """Close the file descriptors (after `close`, once no thread waits any more)."""
        self.close()
        for fd in (self._fd, self._wake_r, self._wake_w):
            if fd is not None:
                os.close(fd)
        self._fd = None

    def _init(self) -> int | None:
        if self._libc is None:
            log.info("no inotify here: socket files are checked every %.0f s", self._poll_s)
            return None
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            error = ctypes.get_errno()
            log.warning(
                "inotify unavailable (%s): socket files are checked every %.0f s",
                os.strerror(error),
                self._poll_s,
            )
            return None
        return int(fd)

    def _watch_all(self, fd: int, libc: ctypes.CDLL) -> bool:
        """Watch every directory; False if one cannot be watched (it does not exist yet)."""
        for directory in self._dirs:
            if directory in self._watching:
                continue
            wd = libc.inotify_add_watch(fd, os.fsencode(directory), MASK)
            if wd < 0:
                error = ctypes.get_errno()
                if error not in (errno.ENOENT, errno.ENOTDIR):
                    log.warning("cannot watch %s: %s", directory, os.strerror(error))
                return False
            self._watching.add(directory)
        return True

    @staticmethod
    def _drain(fd: int) -> None:
        try:
            while os.read(fd, READ_SIZE):
                pass
        except BlockingIOError:
            pass


def _libc() -> ctypes.CDLL | None:
    """The C library the interpreter runs on (no ldconfig run to find it)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1  # noqa: B018 (absent on non-Linux systems)
    except (OSError, AttributeError):
        return None
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    return libc
