"""The DRA kubelet plugin's servers: the DRA socket and the registration socket announcing it (one
gRPC server), the liveness port that calls them, and /metrics. Each is a resource: it starts when
first asked for and stops on shutdown."""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from npu_dra.app.options import Settings
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.wiring.node import plugin_data_dir
from npu_dra.domain.ports import CheckpointStore, NodeClaims

if TYPE_CHECKING:
    from npu_dra.adapters.grpc.liveness_server import LivenessServer
    from npu_dra.adapters.grpc.registration_server import RegistrationState
    from npu_dra.adapters.grpc.sockets import UnixGrpcServer
    from npu_dra.adapters.metrics.prometheus import PrometheusMetrics
    from npu_dra.app.services.maintainer import PoolMaintainer


def registration_state() -> "RegistrationState":
    from npu_dra.adapters.grpc.registration_server import RegistrationState

    return RegistrationState()


def dra_socket(settings: Settings) -> Path:
    """`<kubelet plugins dir>/<driver>/dra.sock`, the endpoint the registration announces."""
    return plugin_data_dir(settings) / "dra.sock"


def registration_socket(settings: Settings) -> Path:
    from npu_dra.adapters.grpc.registration_server import registration_socket as socket_in

    return socket_in(settings.registrar_dir, settings.driver_name)


def running_plugin_sockets(
    *,
    settings: Settings,
    preparer: NodeClaims,
    inventory: InventoryCache,
    state: "RegistrationState",
) -> Iterator["UnixGrpcServer"]:
    """The DRA socket and the registration socket announcing it, on one gRPC server."""
    from npu_dra.app.kubelet_plugin.servers import serve_plugin_sockets

    yield from serve_plugin_sockets(
        dra_socket=dra_socket(settings),
        registration_socket=registration_socket(settings),
        driver=settings.driver_name,
        preparer=preparer,
        inventory=inventory,
        state=state,
    )


def running_liveness(
    *,
    settings: Settings,
    state: "RegistrationState",
    serving: "UnixGrpcServer",
    maintainer: "PoolMaintainer",
) -> Iterator["LivenessServer | None"]:
    from npu_dra.app.kubelet_plugin.servers import serve_liveness

    yield from serve_liveness(
        host=settings.healthcheck_host,
        port=settings.healthcheck_port,
        registration=registration_socket(settings),
        dra=serving.path,
        state=state,
        readiness=maintainer.readiness_problem,
    )


def running_metrics(
    *,
    settings: Settings,
    metrics: "Callable[[], PrometheusMetrics]",
    inventory: InventoryCache,
    state: "RegistrationState",
    checkpoints: CheckpointStore,
) -> Iterator[object]:
    if settings.metrics_port < 0:  # and the Prometheus client is never imported
        yield None
        return
    from npu_dra.app.kubelet_plugin.metrics_server import serve_metrics

    yield from serve_metrics(
        metrics=metrics(),
        port=settings.metrics_port,
        host=settings.healthcheck_host,
        inventory=inventory,
        registration=state,
        checkpoints=checkpoints,
    )
