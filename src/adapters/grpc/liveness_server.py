"""`grpc.health.v1` liveness for the pod's probe: are we still reachable the way the kubelet is?

A process can be alive while its sockets are gone or its servers are wedged, so Check dials our
own registration socket (GetInfo) and DRA socket (an empty NodePrepareResources) over the unix
sockets, exactly as the kubelet would, and reports NOT_SERVING if either does not answer in
time or the kubelet rejected our registration.

The same port answers "readiness": NOT_SERVING while the plugin cannot serve claims for a reason
it knows (no inventory from the hardware, the pool not published yet), so the pod shows 0/1
READY instead of looking healthy; the reason is logged once per change, not on every check.
"""

import logging
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from npu_dra.adapters.grpc.aio_server import AioServer
from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2 as dra_v1
from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2_grpc as dra_v1_grpc
from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2 as reg
from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2_grpc as reg_grpc
from npu_dra.adapters.grpc.sockets import unix_target

log = logging.getLogger(__name__)

LIVENESS_SERVICES = ("", "liveness")
READINESS_SERVICE = "readiness"
CALL_TIMEOUT_S = 1.0


class LivenessProbe:
    """Calls our own sockets; returns why we are not live, or None."""

    def __init__(
        self,
        *,
        registration_socket: Path,
        dra_socket: Path,
        registration_failure: Callable[[], str | None],
        timeout_s: float = CALL_TIMEOUT_S,
    ) -> None:
        self._registration_socket = registration_socket
        self._dra_socket = dra_socket
        self._registration_failure = registration_failure
        self._timeout_s = timeout_s

    def problem(self) -> str | None:
        try:
            with grpc.insecure_channel(unix_target(self._registration_socket)) as channel:
                registration = reg_grpc.RegistrationStub(channel)  # type: ignore[no-untyped-call]
                registration.GetInfo(reg.InfoRequest(), timeout=self._timeout_s)
        except grpc.RpcError as error:
            return f"registration socket {self._registration_socket}: {_describe(error)}"
        try:
            with grpc.insecure_channel(unix_target(self._dra_socket)) as channel:
                dra = dra_v1_grpc.DRAPluginStub(channel)  # type: ignore[no-untyped-call]
                dra.NodePrepareResources(
                    dra_v1.NodePrepareResourcesRequest(), timeout=self._timeout_s
                )
        except grpc.RpcError as error:
            return f"DRA socket {self._dra_socket}: {_describe(error)}"
        failure = self._registration_failure()
        return None if failure is None else f"kubelet rejected the registration: {failure}"


class LivenessServicer(health_pb2_grpc.HealthServicer):  # type: ignore[misc]
    def __init__(
        self, probe: LivenessProbe, readiness: Callable[[], str | None] = lambda: None
    ) -> None:
        self._probe = probe
        self._readiness = readiness
        self._unready: str | None = None  # the reason last logged

    def Check(self, request: Any, context: Any) -> Any:
        if request.service == READINESS_SERVICE:
            return _answer(self._ready())
        if request.service not in LIVENESS_SERVICES:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
        problem = self._probe.problem()
        if problem is not None:
            log.warning("liveness check failed: %s", problem)
        return _answer(problem is None)

    def _ready(self) -> bool:
        problem = self._readiness()
        if problem != self._unready:
            if problem is None:
                log.info("ready: %s no longer holds", self._unready)
            else:
                log.warning("not ready: %s", problem)
            self._unready = problem
        return problem is None


def _answer(serving: bool) -> Any:
    response = health_pb2.HealthCheckResponse
    return response(status=response.SERVING if serving else response.NOT_SERVING)


class LivenessServer:
    """The health service on TCP `host:port` (port 0 picks a free one, see `.port`)."""

    def __init__(self, servicer: LivenessServicer, *, host: str, port: int) -> None:
        self._servicer = servicer
        self._address = f"{host}:{port}"
        self._server: AioServer | None = None
        self.port = port

    def start(self) -> None:
        def register(server: Any) -> None:
            health_pb2_grpc.add_HealthServicer_to_server(self._servicer, server)

        server = AioServer.start(register, [self._address], futures.ThreadPoolExecutor(2, "health"))
        (self.port,) = server.ports
        self._server = server
        log.info("health: serving grpc.health.v1 on port %d", self.port)

    def stop(self, grace: float | None = None) -> None:
        if self._server is not None:
            self._server.stop(grace)
            self._server = None


def _describe(error: grpc.RpcError) -> str:
    code = error.code() if isinstance(error, grpc.Call) else None
    details = error.details() if isinstance(error, grpc.Call) else str(error)
    return f"{code.name if code else 'error'}: {details}"
