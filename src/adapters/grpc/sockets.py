"""gRPC servers on unix sockets, with the file handling the kubelet relies on.

The kubelet discovers plugins by socket files: a stale file from a crashed run must not block
`bind()`, a stopped server must leave no file behind, and a socket file that someone deleted
(a kubelet restart, an operator) means the kubelet no longer sees us, so the server is rebuilt
on the same path. A grpc.Server cannot be restarted, hence `register` to build it again.

One server may listen on several sockets (the kubelet plugin's DRA and registration sockets).
It is a grpc.aio server (adapters/grpc/aio_server.py), which sleeps while no call arrives. Its
sockets appear together when it starts, and go in reverse order when it stops: the last one
(the registration socket) is unlinked first, so the kubelet stops sending work before the
server stops serving.

Whoever can connect to these sockets can prepare devices, so their modes are set explicitly
(0600 by default), never left to the process's umask: the socket is bound under a umask that
grants nobody else anything and chmod-ed after, so there is no moment it is open to all.
"""

import logging
import os
import stat
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from pathlib import Path
from typing import Any

from npu_dra.adapters.atomic import ensure_dir
from npu_dra.adapters.grpc.aio_server import AioServer

log = logging.getLogger(__name__)

MAX_SOCKET_PATH = 107  # sun_path is 108 bytes including the terminating NUL
SOCKET_MODE = 0o600
_UMASK_LOCK = threading.Lock()  # the umask is per process: one bind at a time changes it


def unix_target(path: Path) -> str:
    return f"unix:{path.absolute()}"


def remove_stale(path: Path) -> None:
    """Remove whatever file sits at `path` (as the Go helper does); a directory is an error."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        raise OSError(f"{path} is a directory, expected a socket path")
    path.unlink(missing_ok=True)


def check_socket_path(path: Path) -> None:
    if len(os.fsencode(path.absolute())) > MAX_SOCKET_PATH:
        raise OSError(f"socket path {path} is longer than {MAX_SOCKET_PATH} bytes")


class UnixGrpcServer:
    """One gRPC server listening on one unix socket path, or several (`more_paths`)."""

    def __init__(
        self,
        path: Path,
        register: Callable[[Any], None],
        *,
        workers: int = 8,
        name: str = "",
        mode: int = SOCKET_MODE,
        more_paths: Sequence[Path] = (),
    ) -> None:
        self.path = path
        self.paths = (path, *more_paths)
        self.mode = mode
        self._register = register
        self._workers = workers
        self._name = name or path.name
        self._server: AioServer | None = None
        self._inodes: dict[Path, int | None] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            self._start()

    def stop(self, grace: float | None = None) -> None:
        with self._lock:
            self._stop(grace)

    def gone(self) -> bool:
        """True if not serving, or if a socket file of ours was deleted or replaced."""
        with self._lock:
            return self._server is None or self._moved() is not None

    def ensure_listening(self) -> bool:
        """Rebuild the server if a socket file is gone or replaced; True if it was rebuilt."""
        with self._lock:
            moved = self._moved() if self._server is not None else None
            if moved is None:
                return False
            log.warning("%s: socket %s disappeared; listening again", self._name, moved)
            self._stop(grace=None)
            self._start()
            return True

    def _moved(self) -> Path | None:
        return next((p for p in self.paths if _inode(p) != self._inodes.get(p)), None)

    def _start(self) -> None:
        for path in self.paths:
            check_socket_path(path)
            ensure_dir(path.parent, mode=0o700)
            remove_stale(path)
        pool = futures.ThreadPoolExecutor(self._workers, thread_name_prefix=self._name)
        with _UMASK_LOCK:
            previous = os.umask(0o777 & ~self.mode)
            try:
                server = AioServer.start(self._register, [unix_target(p) for p in self.paths], pool)
            finally:
                os.umask(previous)
        for path in self.paths:
            os.chmod(path, self.mode)
        self._server, self._inodes = server, {p: _inode(p) for p in self.paths}
        log.info("%s: serving on %s", self._name, ", ".join(map(str, self.paths)))

    def _stop(self, grace: float | None) -> None:
        if self._server is None:
            return
        for path in self.paths[:0:-1]:  # the later sockets first: no new work arrives
            self._unlink_ours(path)
        self._server.stop(grace)  # no worker thread outlives the server
        # grpc unlinks its sockets on stop; a file someone else put there since is left alone.
        self._unlink_ours(self.path)
        self._server, self._inodes = None, {}
        log.info("%s: stopped, %s removed", self._name, ", ".join(map(str, self.paths)))

    def _unlink_ours(self, path: Path) -> None:
        if self._inodes.get(path) is not None and _inode(path) == self._inodes[path]:
            path.unlink(missing_ok=True)


def _inode(path: Path) -> int | None:
    try:
        return path.lstat().st_ino
    except FileNotFoundError:
        return None
