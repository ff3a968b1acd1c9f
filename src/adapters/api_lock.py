"""One API per node: the classic device plugin and the DRA plugin never serve one node's chips
at the same time.

Both would offer every chip: a pod asking `huawei.com/Ascend910: 1` through the device plugin
and a ResourceClaim the scheduler allocated could get the same chip (the scheduler's rule that
a device plugin wins for an extended resource served both ways covers requests, not claims).
So each plugin process, while it runs, holds a shared flock(2) on its API's lock file in a host
directory both DaemonSets mount (`--api-lock-dir`, /var/lib/npu-dra): `<profile>-dra.lock` or
`<profile>-device-plugin.lock` (per device profile: this project's GPU plugin does not compete
with its Ascend device plugin on a node that has both). Before it serves, it tries an
exclusive lock on the other API's file without waiting: if that is refused, the other API is
running on this node, and this one refuses to start, naming it (the `.owner` file beside the
lock: pod, process, since when). Shared locks let two instances of one API overlap (a
seamless upgrade of the DRA plugin); the kernel drops a lock when its holder dies, so a killed
plugin never blocks the other API for good. Two plugins of different APIs starting at the same
moment may both refuse; each then retries with its pod's restart back-off, and one wins.
"""

import fcntl
import os
import time
from pathlib import Path

from npu_dra.adapters.atomic import atomic_write, ensure_dir
from npu_dra.domain.errors import DomainError

APIS = {"dra": "the DRA kubelet plugin", "device-plugin": "the classic device plugin"}
DIR_MODE = 0o755
FILE_MODE = 0o644
MAX_OWNER_BYTES = 512


class ApiConflict(DomainError):
    """The other API already serves this node's chips."""


class ApiLock:
    def __init__(self, directory: Path, api: str, owner: str, *, profile: str = "npu") -> None:
        if api not in APIS:
            raise ValueError(f"unknown API {api!r}: one of {', '.join(APIS)}")
        self.directory, self.api, self._owner, self._profile = directory, api, owner, profile
        self._fd: int | None = None

    def acquire(self) -> None:
        """Hold this API's lock, or ApiConflict naming the other API's running plugin."""
        try:
            ensure_dir(self.directory, mode=DIR_MODE)
            self._fd = _open(self._path(self.api, "lock"))
            fcntl.flock(self._fd, fcntl.LOCK_SH)
            self._refuse_if_other_runs()
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            text = f"{self._owner}, pid {os.getpid()}, since {stamp}\n".encode()[:MAX_OWNER_BYTES]
            owner = self._path(self.api, "owner")
            atomic_write(owner, text, mode=FILE_MODE, temp_prefix=f".{owner.name}.")
        except OSError as error:
            self.release()
            raise ApiConflict(f"--api-lock-dir {self.directory}: {error}") from error
        except ApiConflict:
            self.release()
            raise

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with the descriptor
            self._fd = None

    def _path(self, api: str, kind: str) -> Path:
        return self.directory / f"{self._profile}-{api}.{kind}"

    def _refuse_if_other_runs(self) -> None:
        other = next(api for api in APIS if api != self.api)
        fd = _open(self._path(other, "lock"))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ApiConflict(
                f"{APIS[other]} serves this node's NPUs ({_owner(self._path(other, 'owner'))}): "
                f"one API per node, or a chip could go to a pod of each. Stop it first ("
                f"docs/upgrade.md, 'One API per node', moves a node), or point --api-lock-dir "
                f"(API_LOCK_DIR) elsewhere only if the two serve different nodes"
            ) from None
        finally:
            os.close(fd)


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)


def _owner(path: Path) -> str:
    try:
        with open(path, "rb") as found:
            text = found.read(MAX_OWNER_BYTES).decode("utf-8", errors="replace").strip()
    except OSError:
        return "its owner file is unreadable"
    printable = "".join(c if c.isprintable() else "?" for c in text)
    return printable or "no owner recorded"
