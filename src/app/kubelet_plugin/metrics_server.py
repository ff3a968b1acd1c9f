"""`--metrics-port`: the plugin's Prometheus endpoint, a DI resource (off with -1, the default).

The series the services count come from the one PluginMetrics instance; the state series (device
health, registration verdict, prepared claims) are read from the objects that hold that state
when Prometheus scrapes, so nothing has to remember to update them.
"""

import errno
import logging
import threading
from collections.abc import Iterator
from wsgiref.simple_server import WSGIServer

from npu_dra.adapters.grpc.registration_server import RegistrationState
from npu_dra.adapters.metrics.prometheus import (
    CountsCollector,
    DeviceHealthCollector,
    LabelledCollector,
    PrometheusMetrics,
    ValueCollector,
)
from npu_dra.adapters.metrics.series import (
    CLAIM_DEVICES,
    CLAIM_PREFETCH,
    CLAIM_PREFETCH_READY,
    CLAIMS_DEVICE_GONE,
    CLAIMS_PREPARED,
    KUBELET_REGISTERED,
)
from npu_dra.app.services.claim_prefetch import ClaimPrefetch
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.domain.checkpoint import gone_devices
from npu_dra.domain.ports import CheckpointStore

log = logging.getLogger(__name__)
RETRY_BIND_S = 2.0


def registered(state: RegistrationState) -> float:
    """1 registered, 0 rejected by the kubelet, -1 the kubelet has not called yet."""
    status = state.status
    if status is None:
        return -1.0
    return 1.0 if status.registered else 0.0


def claims_device_gone(inventory: InventoryCache, checkpoints: CheckpointStore) -> float:
    """Prepared claims a device of which is gone, or is now another device (0 before the
    hardware has answered: nothing is known to be gone)."""
    known = inventory.known()
    if known is None:
        return 0.0
    claims = checkpoints.load().claims.values()
    return float(sum(1 for claim in claims if gone_devices(claim, known)))


def claim_devices(checkpoints: CheckpointStore) -> Iterator[tuple[tuple[str, str, str], float]]:
    """(claim namespace, claim name, device) of every device prepared on this node."""
    for claim in checkpoints.load().claims.values():
        for device in dict.fromkeys(d.device for d in claim.devices):
            yield (claim.ref.namespace, claim.ref.name, device), 1.0


def watch_state(
    metrics: PrometheusMetrics,
    inventory: InventoryCache,
    registration: RegistrationState,
    checkpoints: CheckpointStore,
) -> None:
    """The state series, read from what holds the state at each scrape."""
    metrics.watch(DeviceHealthCollector(inventory.current))
    metrics.watch(ValueCollector(KUBELET_REGISTERED, lambda: registered(registration)))
    metrics.watch(ValueCollector(CLAIMS_PREPARED, lambda: float(len(checkpoints.load().claims))))
    metrics.watch(
        ValueCollector(CLAIMS_DEVICE_GONE, lambda: claims_device_gone(inventory, checkpoints))
    )
    metrics.watch(LabelledCollector(CLAIM_DEVICES, lambda: claim_devices(checkpoints)))


def watch_prefetch(metrics: PrometheusMetrics, prefetch: ClaimPrefetch) -> None:
    """How many prepares found their claim read ahead (--claim-prefetch), and how many not."""
    metrics.watch(
        CountsCollector(
            CLAIM_PREFETCH, lambda: {"hit": float(prefetch.hits), "miss": float(prefetch.misses)}
        )
    )
    metrics.watch(ValueCollector(CLAIM_PREFETCH_READY, lambda: float(prefetch.ready)))


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
    watch_state(metrics, inventory, registration, checkpoints)
    holder = _Bound(metrics, port, host)
    try:
        yield holder.server
    finally:
        holder.close()


class _Bound:
    """The metrics server, or (while another plugin instance of this node holds the port: a
    seamless upgrade on the host network) a thread that binds it once that instance is gone."""

    def __init__(self, metrics: PrometheusMetrics, port: int, host: str) -> None:
        self._metrics, self._port, self._host = metrics, port, host
        self._stop, self._lock = threading.Event(), threading.Lock()
        self.server: WSGIServer | None = None
        if not self._try():
            log.warning("metrics port %d is in use (another plugin instance?): retrying", port)
            threading.Thread(target=self._retry, name="metrics-bind", daemon=True).start()

    def _try(self) -> bool:
        try:
            self.server = self._metrics.serve(self._port, self._host)
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            return False
        log.info("metrics on port %d", self.server.server_port)
        return True

    def _retry(self) -> None:
        while not self._stop.wait(RETRY_BIND_S):
            with self._lock:
                if self._stop.is_set() or self._try():
                    return

    def close(self) -> None:
        with self._lock:
            self._stop.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
