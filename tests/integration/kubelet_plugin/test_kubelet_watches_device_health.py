"""v1.DRAResourceHealth and v1alpha1.DRAResourceHealth on the DRA socket: the kubelet's
device-health stream (a 1.37 kubelet calls v1, 1.34 and 1.36 call v1alpha1)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
from plugin_node import NODE, Node

from npu_dra.adapters.grpc.gen.dra_health.v1 import api_pb2 as v1_pb2
from npu_dra.adapters.grpc.gen.dra_health.v1 import api_pb2_grpc as v1_grpc
from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2, api_pb2_grpc


def test_the_stream_starts_with_every_device_and_its_health(node: Node) -> None:
    with grpc.insecure_channel(f"unix:{node.dra_socket}") as channel:
        stream = api_pb2_grpc.DRAResourceHealthStub(channel).NodeWatchResources(
            api_pb2.NodeWatchResourcesRequest(), timeout=10
        )
        first = next(stream)
        stream.cancel()

    health = {(d.device.pool_name, d.device.device_name): d.health for d in first.devices}
    assert health == {
        (NODE, f"npu-{i}"): api_pb2.UNHEALTHY if i == 7 else api_pb2.HEALTHY for i in range(8)
    }
    assert all(abs(d.last_updated_time - time.time()) < 60 for d in first.devices)


def test_v1_answers_on_the_same_socket_with_the_same_list(node: Node) -> None:
    with grpc.insecure_channel(f"unix:{node.dra_socket}") as channel:
        v1 = v1_grpc.DRAResourceHealthStub(channel).NodeWatchResources(
            v1_pb2.NodeWatchResourcesRequest(), timeout=10
        )
        alpha = api_pb2_grpc.DRAResourceHealthStub(channel).NodeWatchResources(
            api_pb2.NodeWatchResourcesRequest(), timeout=10
        )
        first_v1, first_alpha = next(v1), next(alpha)
        v1.cancel()
        alpha.cancel()

    health = {d.device.device_name: d.health for d in first_v1.devices}
    assert health == {f"npu-{i}": v1_pb2.UNHEALTHY if i == 7 else v1_pb2.HEALTHY for i in range(8)}
    assert health == {d.device.device_name: d.health for d in first_alpha.devices}


def test_stopping_the_plugin_ends_an_open_stream_promptly(node: Node) -> None:
    with grpc.insecure_channel(f"unix:{node.dra_socket}") as channel:
        stream = api_pb2_grpc.DRAResourceHealthStub(channel).NodeWatchResources(
            api_pb2.NodeWatchResourcesRequest(), timeout=30
        )
        next(stream)
        begin = time.monotonic()
        node.plugin.stop()
        remaining = list(_drain(stream))

    assert time.monotonic() - begin < 4
    assert len(remaining) <= 1


def _drain(stream: Iterator[object]) -> list[object]:
    try:
        return list(stream)
    except grpc.RpcError:
        return []
