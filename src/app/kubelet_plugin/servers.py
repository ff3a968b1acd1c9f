"""The kubelet plugin's servers as DI resources (app/container.py names them): each starts
when first asked for and stops on shutdown. The runtime asks for them in the kubelet's order
(DRA socket serving before the registration socket appears) and shuts them down in reverse.
"""

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from npu_dra.adapters.atomic import ensure_dir
from npu_dra.adapters.grpc.dra_servicer import DraCalls, add_dra_services
from npu_dra.adapters.grpc.liveness_server import LivenessProbe, LivenessServer, LivenessServicer
from npu_dra.adapters.grpc.registration_server import (
    DRA_HEALTH_VERSION,
    DRA_VERSIONS,
    RegistrationServicer,
    RegistrationState,
    add_registration,
)
from npu_dra.adapters.grpc.resource_health_stream import (
    DraHealthServicer,
    InventorySource,
    add_dra_health,
)
from npu_dra.adapters.grpc.sockets import UnixGrpcServer
from npu_dra.domain.ports import NodeClaims

PLUGIN_VERSIONS = (*DRA_VERSIONS, DRA_HEALTH_VERSION)
STOP_GRACE_S = 5.0  # in-flight prepares finish; the kubelet retries anything cut off
# Health streams are bounded (dra_health.MAX_STREAMS), so these always leave threads for
# prepares, unprepares and liveness calls, however many streams clients try to open.
DRA_WORKERS = 16
DATA_DIR_MODE = 0o700  # the DRA socket and the checkpoint: root only, whatever the umask


def serve_dra(
    *, socket: Path, preparer: NodeClaims, inventory: InventorySource
) -> Iterator[UnixGrpcServer]:
    """DRAPlugin v1 and v1beta1, and the device-health stream, on the one DRA socket."""
    calls = DraCalls(preparer)
    health = DraHealthServicer(inventory)

    def register(server: Any) -> None:
        add_dra_services(server, calls)
        add_dra_health(server, health)

    ensure_dir(socket.parent, mode=DATA_DIR_MODE, existing=True)
    server = UnixGrpcServer(socket, register, workers=DRA_WORKERS, name="dra")
    server.start()
    try:
        yield server
    finally:
        health.close()
        server.stop(STOP_GRACE_S)


def serve_registration(
    *, socket: Path, driver: str, endpoint: Path, state: RegistrationState
) -> Iterator[UnixGrpcServer]:
    servicer = RegistrationServicer(
        driver=driver, endpoint=endpoint, versions=PLUGIN_VERSIONS, state=state
    )
    server = UnixGrpcServer(
        socket, partial(add_registration, servicer=servicer), workers=2, name="registration"
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def serve_liveness(
    *, host: str, port: int, registration: Path, dra: Path, state: RegistrationState
) -> Iterator[LivenessServer | None]:
    if port < 0:
        yield None
        return
    probe = LivenessProbe(
        registration_socket=registration, dra_socket=dra, registration_failure=state.failure
    )
    server = LivenessServer(LivenessServicer(probe), host=host, port=port)
    server.start()
    try:
        yield server
    finally:
        server.stop()
