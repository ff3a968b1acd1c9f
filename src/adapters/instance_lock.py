"""InstanceLock: serializes state changes across the plugin instances on one node.

During a seamless upgrade an old and a new plugin pod serve side by side over one data
directory (checkpoint, CDI specs); the kubelet may send a claim's prepare to one and its
unprepare to the other. Each state change (reading the checkpoint, changing it and saving it)
holds this lock: a thread lock for this process's threads, then an exclusive flock(2) on
`serialize.lock` in the data directory for the other process (the Go kubeletplugin helper's
file, k8s.io/dynamic-resource-allocation kubeletplugin). The kernel drops a flock when its
holder dies, so a killed instance never leaves it held. Nothing that waits on the network or a
hardware tool runs under it (app/services/instance_state_lock.py), so a wait longer than WAIT_S
means the
holder is stopped (SIGSTOP, a frozen cgroup) or stuck: the wait ends there with a StateError
naming the holder's pid and state (from /proc/locks), and a wait past WARN_S is logged once.

The lock file is opened once, never through a link, and created root-only, with the data
directory if it is not there yet (the first start on a node takes the lock before serving).
"""

import fcntl
import logging
import os
import threading
import time
from pathlib import Path
from types import TracebackType

from npu_dra.adapters.atomic import ensure_dir
from npu_dra.domain.errors import StateError

log = logging.getLogger(__name__)

LOCK_MODE = 0o600
DIR_MODE = 0o700  # the plugin's data dir: the checkpoint and the DRA socket, root only
WAIT_S = 10.0  # held for milliseconds by a working instance
WARN_S = 1.0
POLL_S = (0.001, 0.02)  # flock has no timeout: asked again, first at once, then every 20 ms
PROC_LOCKS = Path("/proc/locks")


class InstanceLock:
    def __init__(self, path: Path, wait_s: float = WAIT_S) -> None:
        self.path = path
        self._wait_s = wait_s
        self._threads = threading.Lock()
        self._fd: int | None = None

    def __enter__(self) -> "InstanceLock":
        began = time.monotonic()
        if not self._threads.acquire(timeout=self._wait_s):
            raise StateError(f"instance lock {self.path}: {self._held()} (this process)")
        try:
            self._flock(began)
        except BaseException:
            self._threads.release()
            raise
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

    def _flock(self, began: float) -> None:
        try:
            fd = self._file()
        except OSError as error:
            raise StateError(f"instance lock {self.path}: {error}") from error
        pause, warned = POLL_S[0], False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            except OSError as error:
                raise StateError(f"instance lock {self.path}: {error}") from error
            waited = time.monotonic() - began
            if waited >= self._wait_s:
                raise StateError(f"instance lock {self.path}: {self._held()} by {holder(fd)}")
            if waited >= WARN_S and not warned:
                log.warning("waiting for instance lock %s, held by %s", self.path, holder(fd))
                warned = True
            time.sleep(pause)
            pause = min(pause * 2, POLL_S[1])

    def _held(self) -> str:
        return (
            f"held for more than {self._wait_s:.0f}s (a working instance holds it for "
            "milliseconds: the holder is stopped or stuck)"
        )

    def _file(self) -> int:
        if self._fd is None:
            ensure_dir(self.path.parent, mode=DIR_MODE)
            flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
            self._fd = os.open(self.path, flags, LOCK_MODE)
        return self._fd


def holder(fd: int) -> str:
    """Who holds the flock on `fd`'s file, from /proc/locks: "pid N (state)", or why unknown."""
    found = os.fstat(fd)
    file = f"{os.major(found.st_dev):02x}:{os.minor(found.st_dev):02x}:{found.st_ino}"
    try:
        lines = PROC_LOCKS.read_text(errors="replace").splitlines()[:100_000]
    except OSError as error:
        return f"a process /proc/locks does not name ({error.strerror})"
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == file:  # not "->": waiters
            return _process(fields[4])
    return "a process /proc/locks does not name (another PID namespace?)"


def _process(pid: str) -> str:
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text(errors="replace")
    except (OSError, ValueError):
        return f"pid {pid[:20]}"
    state = stat.rpartition(")")[2].split()[:1]
    named = {"T": "stopped", "t": "stopped by a tracer", "D": "in uninterruptible I/O"}
    return f"pid {pid} ({named.get(state[0], 'state ' + state[0]) if state else '?'})"
