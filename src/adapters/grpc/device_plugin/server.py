"""The DevicePlugin service on its socket in the kubelet's device-plugins directory.

The kubelet wipes that directory when it restarts, deleting our socket with it, and a
grpc.Server cannot be started twice, so `restart` builds a new server on the same path. `gone`
tells the runtime the file it listens on was deleted or replaced. A stale file from a crashed
run is removed before binding, and a stopped server leaves no file and no threads behind.
"""

import logging
import os
from concurrent import futures
from pathlib import Path

import grpc

from npu_dra.adapters.grpc.device_plugin.servicer import DevicePluginService
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2 as api
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2_grpc

log = logging.getLogger(__name__)

MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes with the terminating NUL
WORKERS = 8  # each open ListAndWatch stream holds one


def unix_target(path: Path) -> str:
    return f"unix://{path.absolute()}"


class SocketServer:
    def __init__(self, path: Path, service: DevicePluginService, *, stop_grace: float = 0.5):
        if len(os.fsencode(path.absolute())) > MAX_SOCKET_PATH:
            raise ValueError(f"socket path {path} is longer than {MAX_SOCKET_PATH} bytes")
        self.path = path
        self._service = service
        self._grace = stop_grace
        self._server: grpc.Server | None = None
        self._pool: futures.ThreadPoolExecutor | None = None
        self._inode: int | None = None

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.unlink(missing_ok=True)
        self._pool = futures.ThreadPoolExecutor(WORKERS, thread_name_prefix=self.path.name)
        self._server = grpc.server(self._pool)
        api_pb2_grpc.add_DevicePluginServicer_to_server(self._service, self._server)  # type: ignore[no-untyped-call]
        self._server.add_insecure_port(unix_target(self.path))
        self._server.start()
        self._inode = _inode(self.path)
        log.info("serving DevicePlugin on %s", self.path)

    def stop(self) -> None:
        self._service.end_streams()
        if self._server is not None:
            self._server.stop(self._grace).wait()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        if self._inode is not None and _inode(self.path) == self._inode:
            self.path.unlink(missing_ok=True)  # ours; a file someone put there since stays
        self._server, self._pool, self._inode = None, None, None

    def restart(self) -> None:
        self.stop()
        self.start()

    def gone(self) -> bool:
        """True if not serving, or if our socket file was deleted or replaced by another file."""
        return self._server is None or _inode(self.path) != self._inode


def _inode(path: Path) -> int | None:
    try:
        return path.lstat().st_ino
    except FileNotFoundError:
        return None


def answers(path: Path, *, timeout: float) -> bool:
    """Whether a DevicePlugin on `path` answers GetDevicePluginOptions (what the kubelet asks)."""
    with grpc.insecure_channel(unix_target(path)) as channel:
        stub = api_pb2_grpc.DevicePluginStub(channel)  # type: ignore[no-untyped-call]
        try:
            stub.GetDevicePluginOptions(api.Empty(), timeout=timeout)
        except grpc.RpcError:
            return False
    return True
