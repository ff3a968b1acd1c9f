"""Announcing a resource to the kubelet through its `kubelet.sock` Registration service.

The kubelet dials our socket back inside Register (up to 10 s) before it answers, so our server
must be serving first, and the call's deadline must outlast that dial.
"""

from pathlib import Path

import grpc

from npu_dra.adapters.grpc.device_plugin import wire
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2 as api
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2_grpc
from npu_dra.adapters.grpc.sockets import unix_target

REGISTER_TIMEOUT_S = 15.0


class RegistrationFailed(Exception):
    """The kubelet refused or could not be reached; the message says which and why."""


def register(
    kubelet_socket: Path,
    *,
    endpoint: str,
    resource_name: str,
    timeout: float = REGISTER_TIMEOUT_S,
) -> None:
    """Register `resource_name` served on `endpoint` (a file name in the kubelet's directory)."""
    request = api.RegisterRequest(
        version=wire.VERSION,
        endpoint=endpoint,
        resource_name=resource_name,
        options=wire.plugin_options(),
    )
    with grpc.insecure_channel(unix_target(kubelet_socket)) as channel:
        stub = api_pb2_grpc.RegistrationStub(channel)  # type: ignore[no-untyped-call]
        try:
            stub.Register(request, timeout=timeout)
        except grpc.RpcError as error:
            raise RegistrationFailed(
                f"Register {resource_name} at {kubelet_socket}: {error.code().name}: "
                f"{error.details()}"
            ) from error
