"""`v1alpha1.DRAResourceHealth`: the kubelet's stream of our devices' health.

With the ResourceHealthStatus gate on, the kubelet opens NodeWatchResources on every registered
DRA plugin and shows device health in pod status. Every message is the complete list (a device
left out turns Unknown), so each tick re-sends all devices from the cached inventory; it never
probes the hardware itself, whoever refreshes the inventory drives what the stream reports.
At most MAX_STREAMS streams are open at once (see streams.py), and a stream ends as soon as its
client goes away, so streams never hold the threads NodePrepareResources needs.
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
MAX_STREAMS = 4  # the kubelet opens one; a restarted kubelet's old one may linger a moment
_STATUS = {
    Health.HEALTHY: api_pb2.HEALTHY,
    Health.DEGRADED: api_pb2.HEALTHY,  # a minor alarm; the chip still works
    Health.UNHEALTHY: api_pb2.UNHEALTHY,
    Health.CRITICAL: api_pb2.UNHEALTHY,
    Health.UNKNOWN: api_pb2.UNKNOWN,
}


class InventorySource(Protocol):
    def current(self) -> NodeInventory: ...


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
        self, inventory: InventorySource, *, tick_s: float = TICK_S, max_streams: int = MAX_STREAMS
    ) -> None:
        self._inventory = inventory
        self._tick_s = tick_s
        self._closing = False
        self._streams: set[threading.Event] = set()
        self._lock = threading.Lock()
        self.limit = StreamLimit(max_streams, what="DRAResourceHealth")

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
                    yield health_message(self._inventory.current())
                    ended.wait(self._tick_s)
            finally:
                with self._lock:
                    self._streams.discard(ended)

    def close(self) -> None:
        """End every open stream (before the server stops, so stopping does not wait on them)."""
        with self._lock:
            self._closing = True
            streams = list(self._streams)
        for ended in streams:
            ended.set()


def add_dra_health(server: Any, servicer: DraHealthServicer) -> None:
    api_pb2_grpc.add_DRAResourceHealthServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
