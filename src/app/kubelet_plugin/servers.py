"""The kubelet plugin's servers as DI resources (app/container/ declares them,
app/wiring/kubelet_plugin.py builds them): each starts when first asked for and stops on
shutdown. The DRA and registration sockets share one gRPC server; the liveness port, when asked
for, has its own.

A sync gRPC server runs each call on a thread of its pool, and a call waiting on the API (a
prepare of new claims, until --claim-fetch-timeout) holds its thread all that time. The pool is
therefore sized from the two bounds on such waits, claim reads at once (claim_fetch.MAX_READS) and
health streams (MAX_STREAMS), plus a reserve that nothing long ever holds: GetInfo, unprepares,
prepares answered from the checkpoint and the liveness check's own calls always find a thread,
however many pods wait on a dead API server (issue 24: 16 threads, and 16 such prepares stalled
everything else for 20 s). Threads start only when needed and then stay, idle and asleep.
"""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from npu_dra.adapters.atomic import ensure_dir
from npu_dra.adapters.grpc.dra_servicer import DraCalls, add_dra_services
from npu_dra.adapters.grpc.liveness_server import LivenessProbe, LivenessServer, LivenessServicer
from npu_dra.adapters.grpc.registration_server import (
    DRA_HEALTH_VERSIONS,
    DRA_VERSIONS,
    RegistrationServicer,
    RegistrationState,
    add_registration,
)
from npu_dra.adapters.grpc.resource_health_stream import (
    MAX_STREAMS,
    DraHealthServicer,
    InventorySource,
    add_dra_health,
)
from npu_dra.adapters.grpc.sockets import UnixGrpcServer
from npu_dra.app.services.claim_fetch import MAX_READS
from npu_dra.domain.ports import NodeClaims

PLUGIN_VERSIONS = (*DRA_VERSIONS, *DRA_HEALTH_VERSIONS)
STOP_GRACE_S = 5.0  # in-flight prepares finish; the kubelet retries anything cut off
QUICK_CALL_WORKERS = 16  # calls that never wait on the API: the kubelet's, the liveness check's
# +1: a stream that made room for a newer one may still be ending (resource_health_stream.py)
DRA_WORKERS = MAX_READS + MAX_STREAMS + 1 + QUICK_CALL_WORKERS
DATA_DIR_MODE = 0o700  # the DRA socket and the checkpoint: root only, whatever the umask


def serve_plugin_sockets(
    *,
    dra_socket: Path,
    registration_socket: Path,
    driver: str,
    preparer: NodeClaims,
    inventory: InventorySource,
    state: RegistrationState,
) -> Iterator[UnixGrpcServer]:
    """DRAPlugin v1 and v1beta1 and the device-health stream on the DRA socket, the kubelet's
    Registration service on the registration socket: one gRPC server for both (each server
    costs a thread that wakes 5 times a second). Both sockets appear when it serves, so the
    kubelet, which dials the DRA endpoint once it sees the registration socket, finds it
    answering; on stop the registration socket goes first."""
    calls = DraCalls(preparer)
    health = DraHealthServicer(inventory)
    registration = RegistrationServicer(
        driver=driver, endpoint=dra_socket, versions=PLUGIN_VERSIONS, state=state
    )

    def register(server: Any) -> None:
        add_dra_services(server, calls)
        add_dra_health(server, health)
        add_registration(server, registration)

    ensure_dir(dra_socket.parent, mode=DATA_DIR_MODE, existing=True)
    server = UnixGrpcServer(
        dra_socket, register, workers=DRA_WORKERS, name="dra", more_paths=(registration_socket,)
    )
    server.start()
    try:
        yield server
    finally:
        health.close()
        server.stop(STOP_GRACE_S)


def serve_liveness(
    *,
    host: str,
    port: int,
    registration: Path,
    dra: Path,
    state: RegistrationState,
    readiness: Callable[[], str | None] = lambda: None,
) -> Iterator[LivenessServer | None]:
    if port < 0:
        yield None
        return
    probe = LivenessProbe(
        registration_socket=registration, dra_socket=dra, registration_failure=state.failure
    )
    server = LivenessServer(LivenessServicer(probe, readiness), host=host, port=port)
    server.start()
    try:
        yield server
    finally:
        server.stop()
