"""`v1.DRAResourceHealth` and `v1alpha1.DRAResourceHealth`: the kubelet's stream of our devices'
health, one stream behind both services (the same messages and numbers in both; the kubelet
converts v1alpha1 to v1 field by field: k8s.io/kubelet v0.37.2
pkg/apis/dra-health/v1/conversion.go).

Which one a kubelet calls: v1.37.2 picks the newest one the registration lists, v1 before
v1alpha1, and calls none that is not listed (kubernetes v1.37.2
pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go `pickHealthService`, dra_plugin.go
`healthServicesSupportedByKubelet`); v1.34.3 and v1.36.3 always call v1alpha1 (their
dra_plugin.go `NodeWatchResources`). Both are listed (registration_server.DRA_HEALTH_VERSIONS).

With the ResourceHealthStatus gate on, the kubelet opens NodeWatchResources on every registered
DRA plugin and shows device health in pod status. Every message is the complete list (a device
left out turns Unknown), so each tick re-sends all devices from the cached inventory; it never
probes the hardware itself: the health monitor that refreshes the inventory (the pool
maintainer, every --health-interval) drives what the stream reports. Between ticks the stream
looks at the cache every POLL_S and sends at once when a device's health changed, so a change
reaches the kubelet within one health interval (plus POLL_S), not a tick later.
At most MAX_STREAMS streams are open at once (see streams.py), and a stream ends as soon as its
client goes away, so streams never hold the threads NodePrepareResources needs. A stream open for
YIELD_AFTER_S gives its slot up to a new one: a client that holds every slot keeps the kubelet's
stream (retried every 5 s by kubelet v1.34.3, pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go)
out for no longer than that.
"""

import logging
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Protocol

from npu_dra.adapters.grpc.gen.dra_health.v1 import api_pb2 as v1_pb2
from npu_dra.adapters.grpc.gen.dra_health.v1 import api_pb2_grpc as v1_grpc
from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2, api_pb2_grpc
from npu_dra.adapters.grpc.streams import StreamLimit
from npu_dra.domain.device import Health, NodeInventory

log = logging.getLogger(__name__)

TICK_S = 5.0
POLL_S = 0.2  # a look at the in-memory cache: no I/O
MAX_STREAMS = 4  # the kubelet opens one; a restarted kubelet's old one may linger a moment
YIELD_AFTER_S = 10.0  # a flood of new streams is refused; a slot held this long is given up
# HealthStatus by name, the same in both versions (v1.HEALTHY, v1alpha1.HEALTHY, ...).
_STATUS = {
    Health.HEALTHY: "HEALTHY",
    Health.DEGRADED: "HEALTHY",  # a minor alarm; the chip still works
    Health.UNHEALTHY: "UNHEALTHY",
    Health.CRITICAL: "UNHEALTHY",
    Health.UNKNOWN: "UNKNOWN",
}


class InventorySource(Protocol):
    def current(self) -> NodeInventory: ...


def health_words(inventory: NodeInventory) -> tuple[tuple[str, Health], ...]:
    return tuple((d.name, d.health) for d in inventory.devices)


def health_message(inventory: NodeInventory, api: ModuleType = api_pb2) -> Any:
    """The complete list as `api`'s NodeWatchResourcesResponse (v1's or v1alpha1's api_pb2)."""
    now = int(time.time())
    return api.NodeWatchResourcesResponse(
        devices=[
            api.DeviceHealth(
                device=api.DeviceIdentifier(pool_name=inventory.node, device_name=d.name),
                health=api.HealthStatus.Value(_STATUS[d.health]),
                last_updated_time=now,
                message=d.health.value,
            )
            for d in inventory.devices
        ]
    )


class DraHealthServicer(api_pb2_grpc.DRAResourceHealthServicer):
    """v1alpha1's servicer, and (`v1`) v1's over the same streams, limit and close."""

    def __init__(
        self,
        inventory: InventorySource,
        *,
        tick_s: float = TICK_S,
        poll_s: float = POLL_S,
        max_streams: int = MAX_STREAMS,
        yield_after_s: float = YIELD_AFTER_S,
    ) -> None:
        self._inventory = inventory
        self._tick_s = tick_s
        self._poll_s = poll_s
        self._closing = False
        self._streams: set[threading.Event] = set()
        self._lock = threading.Lock()
        self.limit = StreamLimit(max_streams, what="DRAResourceHealth", yield_after_s=yield_after_s)
        self.v1 = V1HealthServicer(self)

    def NodeWatchResources(
        self, request: api_pb2.NodeWatchResourcesRequest, context: Any
    ) -> Iterator[api_pb2.NodeWatchResourcesResponse]:
        return self.watch(context, api_pb2)

    def watch(self, context: Any, api: ModuleType) -> Iterator[Any]:
        """The stream, in `api`'s messages (v1's or v1alpha1's api_pb2)."""
        with self.limit.slot(context):
            ended = threading.Event()
            context.add_callback(ended.set)
            with self._lock:
                if self._closing:
                    return
                self._streams.add(ended)
            log.info("kubelet watches device health over %s", api.DESCRIPTOR.package)
            try:
                while not ended.is_set() and context.is_active():
                    current = self._inventory.current()
                    yield health_message(current, api)
                    self._until_tick_or_change(ended, health_words(current))
            finally:
                with self._lock:
                    self._streams.discard(ended)

    def _until_tick_or_change(
        self, ended: threading.Event, sent: tuple[tuple[str, Health], ...]
    ) -> None:
        deadline = time.monotonic() + self._tick_s
        while (left := deadline - time.monotonic()) > 0:
            if ended.wait(min(self._poll_s, left)):
                return
            if health_words(self._inventory.current()) != sent:
                return

    def close(self) -> None:
        """End every open stream (before the server stops, so stopping does not wait on them)."""
        with self._lock:
            self._closing = True
            streams = list(self._streams)
        for ended in streams:
            ended.set()


class V1HealthServicer(v1_grpc.DRAResourceHealthServicer):
    """`v1.DRAResourceHealth` (kubelet 1.37+): the same streams in v1's messages."""

    def __init__(self, streams: DraHealthServicer) -> None:
        self._streams = streams

    def NodeWatchResources(
        self, request: v1_pb2.NodeWatchResourcesRequest, context: Any
    ) -> Iterator[v1_pb2.NodeWatchResourcesResponse]:
        return self._streams.watch(context, v1_pb2)


def add_dra_health(server: Any, servicer: DraHealthServicer) -> None:
    """Both versions of the service on `server`."""
    v1_grpc.add_DRAResourceHealthServicer_to_server(servicer.v1, server)  # type: ignore[no-untyped-call]
    api_pb2_grpc.add_DRAResourceHealthServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
