"""`--metrics-port`: the plugin's Prometheus endpoint, a DI resource (off with -1, the default).

The series the services count come from the one PluginMetrics instance; the state series (device
health, registration verdict, prepared claims) are read from the objects that hold that state
when Prometheus scrapes, so nothing has to remember to update them.
"""

import logging
from collections.abc import Iterator
from wsgiref.simple_server import WSGIServer

from npu_dra.adapters.grpc.registration_server import RegistrationState
from npu_dra.adapters.metrics.prometheus import (
    DeviceHealthCollector,
    PrometheusMetrics,
    ValueCollector,
)
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.domain.ports import CheckpointStore

log = logging.getLogger(__name__)


def registered(state: RegistrationState) -> float:
    """1 registered, 0 rejected by the kubelet, -1 the kubelet has not called yet."""
    status = state.status
    if status is None:
        return -1.0
    return 1.0 if status.registered else 0.0


def serve_metrics(
    *,
    metrics: PrometheusMetrics,
    port: int | None,
    host: str,
    inventory: InventoryCache,
    registration: RegistrationState,
    checkpoints: CheckpointStore,
) -> Iterator[WSGIServer | None]:
    if port is None or port < 0:
        yield None
        return
    metrics.watch(DeviceHealthCollector(inventory.current))
    metrics.watch(
        ValueCollector(
            "npu_dra_kubelet_registered",
            "The kubelet's verdict on the plugin's registration: 1 registered, 0 rejected, "
            "-1 not yet called.",
            lambda: registered(registration),
        )
    )
    metrics.watch(
        ValueCollector(
            "npu_dra_claims_prepared",
            "Claims prepared on this node (in the checkpoint).",
            lambda: float(len(checkpoints.load().claims)),
        )
    )
    server = metrics.serve(port, host)
    log.info("metrics on port %d", server.server_port)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
