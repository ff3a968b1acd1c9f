"""`v1alpha1.DRAResourceHealth`: the kubelet's stream of our devices' health.

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
from typing import Any, Protocol

from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2, api_pb2_grpc
from npu_dra.adapters.grpc.streams import StreamLimit
from npu_dra.domain.device import Health, NodeInventory

log = logging.getLogger(__name__)

TICK_S = 5.0
POLL_S = 0.2  # a look at the in-memory cache: no I/O
MAX_STREAMS = 4  # the kubelet opens one; a restarted kubelet's old one may linger a moment
YIELD_AFTER_S = 10.0  # a flood of new streams is refused; a slot held this long is given up
_STATUS = {
    Health.HEALTHY: api_pb2.HEALTHY,
    Health.DEGRADED: api_pb2.HEALTHY,  # a minor alarm; the chip still works
    Health.UNHEALTHY: api_pb2.UNHEALTHY,
    Health.CRITICAL: api_pb2.UNHEALTHY,
    Health.UNKNOWN: api_pb2.UNKNOWN,
}


class InventorySource(Protocol):
    def current(self) -> NodeInventory: ...


def health_words(inventory: NodeInventory) -> tuple[tuple[str, Health], ...]:
    return tuple((d.name, d.health) for d in inventory.devices)


def health_message(inventory: NodeInventory) -> api_pb2.NodeWatchResourcesResponse:
    now = int(time.time())
    return api_pb2.NodeWatchResourcesResponse(
        devices=[
            api_pb2.DeviceHealth(
                device=api_pb2.DeviceIdentifier(pool_name=inventory.node, device_name=d.name),
                health=_STATUS[d.health],
                last_updated_time=now,
                message=d.health.value,
            )
            for d in inventory.devices
        ]
    )


class DraHealthServicer(api_pb2_grpc.DRAResourceHealthServicer):
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

    def NodeWatchResources(
        self, request: api_pb2.NodeWatchResourcesRequest, context: Any
    ) -> Iterator[api_pb2.NodeWatchResourcesResponse]:
        with self.limit.slot(context):
            ended = threading.Event()
            context.add_callback(ended.set)
            with self._lock:
                if self._closing:
                    return
                self._streams.add(ended)
            log.info("kubelet watches device health")
            try:
                while not ended.is_set() and context.is_active():
                    current = self._inventory.current()
                    yield health_message(current)
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


def add_dra_health(server: Any, servicer: DraHealthServicer) -> None:
    api_pb2_grpc.add_DRAResourceHealthServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
