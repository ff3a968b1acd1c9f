"""gRPC servers on unix sockets, with the file handling the kubelet relies on.

The kubelet discovers plugins by socket files: a stale file from a crashed run must not block
`bind()`, a stopped server must leave no file behind, and a socket file that someone deleted
(a kubelet restart, an operator) means the kubelet no longer sees us, so the server is rebuilt
on the same path. A grpc.Server cannot be restarted, hence `register` to build it again.

Whoever can connect to these sockets can prepare devices, so their modes are set explicitly
(0600 by default), never left to the process's umask: the socket is bound under a umask that
grants nobody else anything and chmod-ed after, so there is no moment it is open to all.
"""

import logging
import os
import stat
import threading
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc

from npu_dra.adapters.atomic import ensure_dir

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
    """One gRPC server listening on one unix socket path."""

    def __init__(
        self,
        path: Path,
        register: Callable[[Any], None],
        *,
        workers: int = 8,
        name: str = "",
        mode: int = SOCKET_MODE,
    ) -> None:
        self.path = path
        self.mode = mode
        self._register = register
        self._workers = workers
        self._name = name or path.name
        self._server: Any = None
        self._pool: futures.ThreadPoolExecutor | None = None
        self._inode: int | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            self._start()

    def stop(self, grace: float | None = None) -> None:
        with self._lock:
            self._stop(grace)

    def gone(self) -> bool:
        """True if not serving, or if our socket file was deleted or replaced by another file."""
        with self._lock:
            return self._server is None or _inode(self.path) != self._inode

    def ensure_listening(self) -> bool:
        """Rebuild the server if its socket file is gone or replaced; True if it was rebuilt."""
        with self._lock:
            if self._server is None or self._inode == _inode(self.path):
                return False
            log.warning("%s: socket %s disappeared; listening again", self._name, self.path)
            self._stop(grace=None)
            self._start()
            return True

    def _start(self) -> None:
        check_socket_path(self.path)
        ensure_dir(self.path.parent, mode=0o700)
        remove_stale(self.path)
        self._pool = futures.ThreadPoolExecutor(self._workers, thread_name_prefix=self._name)
        server = grpc.server(self._pool)
        self._register(server)
        with _UMASK_LOCK:
            previous = os.umask(0o777 & ~self.mode)
            try:
                server.add_insecure_port(unix_target(self.path))
                server.start()
            finally:
                os.umask(previous)
        os.chmod(self.path, self.mode)
        self._server, self._inode = server, _inode(self.path)
        log.info("%s: serving on %s", self._name, self.path)

    def _stop(self, grace: float | None) -> None:
        if self._server is None:
            return
        self._server.stop(grace).wait()
        if self._pool is not None:  # no worker thread outlives the server
            self._pool.shutdown(wait=True, cancel_futures=True)
        # grpc unlinks its socket on stop; a file someone else put there since is left alone.
        if self._inode is not None and _inode(self.path) == self._inode:
            self.path.unlink(missing_ok=True)
        self._server, self._pool, self._inode = None, None, None
        log.info("%s: stopped, %s removed", self._name, self.path)


def _inode(path: Path) -> int | None:
    try:
        return path.lstat().st_ino
    except FileNotFoundError:
        return None
