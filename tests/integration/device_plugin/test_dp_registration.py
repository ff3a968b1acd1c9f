"""Registration with a kubelet over real sockets, and staying registered through its restarts."""

import threading
import time

import pytest

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.device_plugin import registration_supervisor
from npu_dra.app.device_plugin.liveness import failing_sockets
from npu_dra.domain.device import Device, HostFiles, NodeInventory
from npu_dra.domain.ids import DeviceName, NodeName
from tests.support.kubelet_dp import FakeKubelet

MESH_910B = {"chip": "910B4", "count": 8, "numaNodes": [6, 6, 4, 4, 0, 0, 2, 2], "topology": "mesh"}
SOCKET = "npu-dra-ascend910.sock"


def fake() -> FakeHardware:
    return FakeHardware(MESH_910B, node=NodeName("node-a"))


MANAGER = frozenset({"davinci_manager"})


class MixedNode:
    """A HardwareProbe for a node with two 910B4 and two 310P3 chips."""

    def probe(self) -> NodeInventory:
        chips = ("910B4", "910B4", "310P3", "310P3")
        devices = tuple(
            Device(DeviceName(f"npu-{i}"), i, i, i, 0, chip, 1 << 30)
            for i, chip in enumerate(chips)
        )
        return NodeInventory(NodeName("node-a"), devices, HostFiles(device_nodes=MANAGER))


def test_registers_after_serving_with_preferred_allocation_available(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake())
    (registration,) = kubelet.wait_for_registrations(1)
    request = registration.request
    assert (request.version, request.endpoint) == ("v1beta1", SOCKET)
    assert request.resource_name == "huawei.com/Ascend910"
    assert request.options.get_preferred_allocation_available
    assert not request.options.pre_start_required
    assert registration.options == request.options  # what the kubelet got when it dialled back
    with kubelet.plugin(SOCKET) as plugin:
        assert plugin.options() == request.options


def test_a_mixed_node_serves_one_resource_per_chip_family(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(MixedNode())
    registrations = kubelet.wait_for_registrations(2)
    served = {r.request.resource_name: r.request.endpoint for r in registrations}
    assert served == {
        "huawei.com/Ascend310P": "npu-dra-ascend310p.sock",
        "huawei.com/Ascend910": "npu-dra-ascend910.sock",
    }
    with kubelet.plugin("npu-dra-ascend310p.sock") as plugin:
        assert set(plugin.watch().next_list()) == {"npu-2", "npu-3"}


def test_resource_name_can_be_overridden(kubelet: FakeKubelet, start_plugin) -> None:
    start_plugin(fake(), resource_name="example.com/npu")
    (registration,) = kubelet.wait_for_registrations(1)
    assert registration.request.resource_name == "example.com/npu"


def test_a_kubelet_restart_is_followed_by_a_new_registration_within_two_seconds(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake())
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as before:
        stream = before.watch()
        stream.next_list()
        restarted_at = kubelet.restart()  # wipes our socket too
        again = kubelet.wait_for_registrations(2, timeout=2.0)[1]
        assert stream.ended()  # the old server is gone with its streams
    assert again.at - restarted_at < 2.0
    print(f"registered again {again.at - restarted_at:.2f}s after the kubelet restarted")
    assert again.request.endpoint == SOCKET
    with kubelet.plugin(SOCKET) as after:
        assert len(after.watch().next_list()) == 8


def test_a_deleted_socket_is_served_again_and_registered(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake())
    kubelet.wait_for_registrations(1)
    (kubelet.dir / SOCKET).unlink()
    kubelet.wait_for_registrations(2, timeout=2.0)
    with kubelet.plugin(SOCKET) as plugin:
        assert plugin.options().get_preferred_allocation_available


def test_registration_waits_for_a_kubelet_that_starts_later(
    kubelet: FakeKubelet, start_plugin
) -> None:
    kubelet.stop()
    kubelet.socket.unlink(missing_ok=True)
    start_plugin(fake())
    time.sleep(0.5)
    assert kubelet.registrations == []
    kubelet.start()
    kubelet.wait_for_registrations(1, timeout=2.0)


def test_a_closed_stream_is_served_again_on_reconnect(kubelet: FakeKubelet, start_plugin) -> None:
    start_plugin(fake())
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        first = plugin.watch()
        first.next_list()
        first.cancel()
        assert len(plugin.watch().next_list()) == 8


def test_a_stream_lost_while_the_kubelet_stays_up_leads_to_a_new_registration(
    kubelet: FakeKubelet, start_plugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registration_supervisor, "STREAM_GRACE_S", 0.3)
    start_plugin(fake())
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        stream = plugin.watch()
        stream.next_list()
        stream.cancel()
        kubelet.wait_for_registrations(2, timeout=2.0)


def test_stopping_removes_sockets_and_leaves_no_threads(kubelet: FakeKubelet, build_plugin) -> None:
    before = set(threading.enumerate())
    runtime = build_plugin(fake())
    runtime.start()
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        plugin.watch().next_list()
        runtime.stop()
    assert not (kubelet.dir / SOCKET).exists()
    deadline = time.monotonic() + 5
    while _new_threads(before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _new_threads(before) == []


def _new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads started since `before`, but the fake kubelet's own workers."""
    return [
        t
        for t in threading.enumerate()
        if t not in before and t.is_alive() and not t.name.startswith("fake-kubelet")
    ]


def test_liveness_passes_while_serving_and_names_a_dead_socket(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake())
    kubelet.wait_for_registrations(1)
    assert failing_sockets(kubelet.dir) == []
    dead = kubelet.dir / "npu-dra-ascend310p.sock"
    dead.touch()
    assert failing_sockets(kubelet.dir, timeout=0.5) == [dead]
