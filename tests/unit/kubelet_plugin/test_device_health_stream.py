"""The device-health stream re-sends the complete list from the cached inventory each tick."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from npu_dra.adapters.grpc.gen.dra_health.v1 import api_pb2 as v1_pb2
from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2
from npu_dra.adapters.grpc.resource_health_stream import DraHealthServicer
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.domain.device import Health
from npu_dra.domain.ids import NodeName


class OpenCall:
    """grpc's servicer context, as far as the stream uses it: the kubelet is still listening."""

    def __init__(self) -> None:
        self.callbacks: list[Callable[[], None]] = []

    def is_active(self) -> bool:
        return True

    def add_callback(self, callback: Callable[[], None]) -> bool:
        self.callbacks.append(callback)
        return True

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise Aborted(code, details)


class Aborted(Exception):
    pass


def health_of(message: Any) -> dict[str, int]:
    return {d.device.device_name: d.health for d in message.devices}


def test_each_message_is_the_complete_list_and_follows_the_cached_inventory() -> None:
    hardware = FakeHardware(
        {"chip": "910B4", "count": 3, "health": {1: "Warning"}}, node=NodeName("n1")
    )
    inventory = InventoryCache(hardware)
    stream = DraHealthServicer(inventory, tick_s=0.001).NodeWatchResources(
        api_pb2.NodeWatchResourcesRequest(), OpenCall()
    )

    first = next(stream)
    hardware.set_health(2, Health.UNHEALTHY)
    unchanged = next(stream)
    inventory.refresh()
    after_refresh = next(stream)

    ok = api_pb2.HEALTHY
    assert health_of(first) == {"npu-0": ok, "npu-1": ok, "npu-2": ok}
    assert health_of(unchanged) == health_of(first)
    assert health_of(after_refresh) == {"npu-0": ok, "npu-1": ok, "npu-2": api_pb2.UNHEALTHY}
    assert [d.message for d in first.devices] == ["Healthy", "Degraded", "Healthy"]


def test_close_ends_the_stream() -> None:
    inventory = InventoryCache(FakeHardware({"chip": "910B4", "count": 1}, node=NodeName("n1")))
    servicer = DraHealthServicer(inventory, tick_s=0.001)
    stream = servicer.NodeWatchResources(api_pb2.NodeWatchResourcesRequest(), OpenCall())
    next(stream)

    servicer.close()

    assert list(itertools.islice(stream, 5)) == []


def test_streams_past_the_bound_are_refused_and_a_gone_client_frees_its_slot() -> None:
    inventory = InventoryCache(FakeHardware({"chip": "910B4", "count": 1}, node=NodeName("n1")))
    servicer = DraHealthServicer(inventory, tick_s=0.001, max_streams=2)
    calls = [OpenCall() for _ in range(2)]
    streams = [servicer.NodeWatchResources(api_pb2.NodeWatchResourcesRequest(), c) for c in calls]
    for stream in streams:
        next(stream)

    with pytest.raises(Aborted) as refused:
        next(servicer.NodeWatchResources(api_pb2.NodeWatchResourcesRequest(), OpenCall()))
    for callback in calls[0].callbacks:  # the first client hung up
        callback()
    assert list(itertools.islice(streams[0], 5)) == []
    late = servicer.NodeWatchResources(api_pb2.NodeWatchResourcesRequest(), OpenCall())

    assert refused.value.args[0] == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "2 stream(s) already open" in refused.value.args[1]
    assert len(next(late).devices) == 1


def test_v1_streams_the_same_list_in_v1s_messages() -> None:
    hardware = FakeHardware(
        {"chip": "910B4", "count": 2, "health": {1: "Alarm"}}, node=NodeName("n")
    )
    servicer = DraHealthServicer(InventoryCache(hardware), tick_s=0.001)

    v1 = next(servicer.v1.NodeWatchResources(v1_pb2.NodeWatchResourcesRequest(), OpenCall()))
    alpha = next(servicer.NodeWatchResources(api_pb2.NodeWatchResourcesRequest(), OpenCall()))

    assert isinstance(v1, v1_pb2.NodeWatchResourcesResponse)
    assert isinstance(alpha, api_pb2.NodeWatchResourcesResponse)
    assert health_of(v1) == {"npu-0": v1_pb2.HEALTHY, "npu-1": v1_pb2.UNHEALTHY}
    assert health_of(v1) == health_of(alpha)
    assert [(d.device.pool_name, d.message) for d in v1.devices] == [
        (d.device.pool_name, d.message) for d in alpha.devices
    ]


def test_both_versions_count_against_one_stream_bound_and_close_ends_both() -> None:
    inventory = InventoryCache(FakeHardware({"chip": "910B4", "count": 1}, node=NodeName("n1")))
    servicer = DraHealthServicer(inventory, tick_s=0.001, max_streams=2)
    alpha = servicer.NodeWatchResources(api_pb2.NodeWatchResourcesRequest(), OpenCall())
    v1 = servicer.v1.NodeWatchResources(v1_pb2.NodeWatchResourcesRequest(), OpenCall())
    next(alpha)
    next(v1)

    with pytest.raises(Aborted) as refused:
        next(servicer.v1.NodeWatchResources(v1_pb2.NodeWatchResourcesRequest(), OpenCall()))
    servicer.close()

    assert refused.value.args[0] == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert list(itertools.islice(v1, 5)) == []
    assert list(itertools.islice(alpha, 5)) == []
