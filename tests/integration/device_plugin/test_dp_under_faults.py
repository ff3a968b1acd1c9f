"""The device plugin's socket under hostile load: stream floods, ids it never offered, huge
Allocate requests. Each answer must come, in time and bounded in size."""

import contextlib
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.domain.ids import NodeName
from tests.support.kubelet_dp import FakeKubelet, PluginClient

MESH_910B = {"chip": "910B4", "count": 8, "numaNodes": [6, 6, 4, 4, 0, 0, 2, 2], "topology": "mesh"}
SOCKET = "npu-dra-ascend910.sock"
FLOOD = 16


def fake() -> FakeHardware:
    return FakeHardware(MESH_910B, node=NodeName("node-a"))


@contextlib.contextmanager
def streams(socket: Path, count: int) -> Iterator[list[grpc.StatusCode | None]]:
    """`count` ListAndWatch streams on their own connections: None for each one that got its
    first list, else the status it was refused with; all cancelled on exit."""
    clients = [PluginClient(socket) for _ in range(count)]
    outcomes: list[grpc.StatusCode | None] = []
    try:
        for client in clients:
            try:
                client.watch().next_list(timeout=10)
                outcomes.append(None)
            except grpc.RpcError as error:
                outcomes.append(error.code())
        yield outcomes
    finally:
        for client in clients:
            client.close()


def test_a_flood_of_list_and_watch_streams_never_starves_allocate(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake())
    kubelet.wait_for_registrations(1)
    with streams(kubelet.dir / SOCKET, FLOOD) as outcomes, kubelet.plugin(SOCKET) as plugin:
        response = plugin.allocate(["npu-0"])
        preferred = plugin.preferred(["npu-2", "npu-3"], 1)
    assert response.container_responses[0].envs
    assert len(preferred) == 1
    assert None in outcomes
    assert set(outcomes) == {None, grpc.StatusCode.RESOURCE_EXHAUSTED}


def test_preferred_allocation_answers_only_offered_ids_and_at_most_the_size(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake())
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        outside = plugin.preferred(["npu-0", "npu-1"], 2, must=["npu-5"])
        smaller = plugin.preferred([f"npu-{i}" for i in range(8)], 1, must=["npu-2", "npu-3"])
    assert set(outside) <= {"npu-0", "npu-1"}
    assert smaller == ["npu-2"]


@pytest.mark.parametrize("count", [9, 1000])
def test_allocate_of_a_huge_id_list_gets_a_short_error(
    kubelet: FakeKubelet, start_plugin, count: int
) -> None:
    start_plugin(fake())
    kubelet.wait_for_registrations(1)
    ids = [f"ghost-{i}-" + "x" * 4000 for i in range(count)]
    with kubelet.plugin(SOCKET) as plugin, pytest.raises(grpc.RpcError) as refused:
        plugin.allocate(ids)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"asks for {count} device ids; this node has 8" in refused.value.details()
    assert len(refused.value.details()) < 1000
