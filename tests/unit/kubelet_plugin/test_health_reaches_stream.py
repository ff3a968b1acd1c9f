"""A health change the health monitor finds reaches a DRAResourceHealth subscriber within one
--health-interval: the stream sends on the change, not on its next keep-alive tick.

The tick is an hour here, so only the change can have sent the message; probes are counted, so
"within one interval" means "by the first probe that saw it" (one more may have started while
the change was made), without timing anything.
"""

from __future__ import annotations

import queue
import threading

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2
from npu_dra.adapters.grpc.resource_health_stream import DraHealthServicer
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.device import Health, NodeInventory
from npu_dra.domain.ids import DriverName, NodeName
from tests.unit.kubelet_plugin.test_device_health_stream import OpenCall, health_of

HOUR_S = 3600.0
INTERVAL_S = 0.2


class CountingHardware:
    def __init__(self, hardware: FakeHardware) -> None:
        self.hardware = hardware
        self.probes = 0

    def probe(self) -> NodeInventory:
        self.probes += 1
        return self.hardware.probe()


def test_an_alarm_reaches_the_subscriber_by_the_first_probe_that_sees_it() -> None:
    hardware = CountingHardware(FakeHardware({"chip": "910B4", "count": 4}, node=NodeName("n")))
    inventory = InventoryCache(hardware)
    publisher = PoolPublisher(
        inventory=inventory, cluster=MemoryCluster(), driver=DriverName("npu.huawei.com")
    )
    monitor = PoolMaintainer(inventory=inventory, publisher=publisher, interval_s=INTERVAL_S)
    servicer = DraHealthServicer(inventory, tick_s=HOUR_S, poll_s=0.01)
    received: queue.Queue[tuple[int, api_pb2.NodeWatchResourcesResponse]] = queue.Queue()

    def subscribe() -> None:
        stream = servicer.NodeWatchResources(api_pb2.NodeWatchResourcesRequest(), OpenCall())
        for message in stream:
            received.put((hardware.probes, message))

    monitor.start()
    threading.Thread(target=subscribe, daemon=True).start()
    try:
        _, first = received.get(timeout=30)
        probes_at_flip = hardware.probes
        hardware.hardware.set_health(2, Health.UNHEALTHY)
        probes_at_arrival, changed = received.get(timeout=30)
    finally:
        servicer.close()
        monitor.stop()

    assert health_of(first)["npu-2"] == api_pb2.HEALTHY
    assert health_of(changed)["npu-2"] == api_pb2.UNHEALTHY
    assert probes_at_arrival - probes_at_flip <= 2
