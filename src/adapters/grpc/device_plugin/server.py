"""The DevicePlugin service on its socket in the kubelet's device-plugins directory.

The kubelet wipes that directory when it restarts, deleting our socket with it, and a
grpc.Server cannot be started twice, so `restart` builds a new server on the same path. `gone`
tells the runtime the file it listens on was deleted or replaced. A stale file from a crashed
run is removed before binding, and a stopped server leaves no file and no threads behind.
"""

from pathlib import Path

import grpc

from npu_dra.adapters.grpc.device_plugin.servicer import DevicePluginService
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2 as api
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2_grpc
from npu_dra.adapters.grpc.sockets import UnixGrpcServer, check_socket_path, unix_target

WORKERS = 10  # at most servicer.MAX_STREAMS hold one each; the rest answer unary calls


class SocketServer:
    def __init__(self, path: Path, service: DevicePluginService, *, stop_grace: float = 0.5):
        check_socket_path(path)
        self.path = path
        self._service = service
        self._grace = stop_grace
        self._unix = UnixGrpcServer(path, self._add_service, workers=WORKERS)

    def start(self) -> None:
        self._unix.start()

    def stop(self) -> None:
        self._service.end_streams()  # open ListAndWatch streams would hold the workers
        self._unix.stop(self._grace)

    def restart(self) -> None:
        self.stop()
        self.start()

    def gone(self) -> bool:
        """True if not serving, or if our socket file was deleted or replaced by another file."""
        return self._unix.gone()

    def _add_service(self, server: grpc.Server) -> None:
        api_pb2_grpc.add_DevicePluginServicer_to_server(self._service, server)  # type: ignore[no-untyped-call]


def answers(path: Path, *, timeout: float) -> bool:
    """Whether a DevicePlugin on `path` answers GetDevicePluginOptions (what the kubelet asks)."""
    with grpc.insecure_channel(unix_target(path)) as channel:
        stub = api_pb2_grpc.DevicePluginStub(channel)  # type: ignore[no-untyped-call]
        try:
            stub.GetDevicePluginOptions(api.Empty(), timeout=timeout)
        except grpc.RpcError:
            return False
    return True
