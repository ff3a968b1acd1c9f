"""What the kubelet sees on a registered plugin's socket: lists, health, preferences, Allocate."""

import json
import queue

import grpc
import pytest

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.domain.device import Health
from npu_dra.domain.ids import NodeName
from tests.support.kubelet_dp import FakeKubelet

MESH_910B = {"chip": "910B4", "count": 8, "numaNodes": [6, 6, 4, 4, 0, 0, 2, 2], "topology": "mesh"}
RINGS_910A = {"chip": "910A", "count": 8, "topology": "rings"}
NPUS = [f"npu-{i}" for i in range(8)]
SOCKET = "npu-dra-ascend910.sock"


def fake(description: dict[str, object]) -> FakeHardware:
    return FakeHardware(description, node=NodeName("node-a"))


def test_list_and_watch_sends_every_npu_healthy_with_its_numa_node(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake(MESH_910B))
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        listing = plugin.watch().next_list()
    assert listing == {f"npu-{i}": ("Healthy", (n,)) for i, n in enumerate(MESH_910B["numaNodes"])}


def test_a_chip_going_unhealthy_and_back_is_streamed_within_one_interval(
    kubelet: FakeKubelet, start_plugin
) -> None:
    hardware = fake(MESH_910B)
    start_plugin(hardware, health_interval=0.2)
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        stream = plugin.watch()
        stream.next_list()
        hardware.set_health(3, Health.UNHEALTHY)
        listing = stream.next_list(timeout=1.0)
        assert listing["npu-3"] == ("Unhealthy", (4,))
        assert all(h == "Healthy" for name, (h, _) in listing.items() if name != "npu-3")
        hardware.set_health(3, Health.DEGRADED)  # a minor alarm: still usable
        assert stream.next_list(timeout=1.0)["npu-3"] == ("Healthy", (4,))


def test_an_unchanged_probe_sends_nothing_new(kubelet: FakeKubelet, start_plugin) -> None:
    start_plugin(fake(MESH_910B), health_interval=0.1)
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        stream = plugin.watch()
        stream.next_list()
        with pytest.raises(queue.Empty):  # nothing within five intervals
            stream.next_list(timeout=0.5)


def test_preferred_allocation_on_910a_keeps_jobs_inside_one_hccs_ring(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake(RINGS_910A))
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        assert plugin.preferred(NPUS, 4) == ["npu-0", "npu-1", "npu-2", "npu-3"]
        assert plugin.preferred(NPUS[1:], 4) == ["npu-4", "npu-5", "npu-6", "npu-7"]
        assert plugin.preferred(NPUS[3:], 2) == ["npu-4", "npu-5"]
        assert plugin.preferred(NPUS[1:], 1) == ["npu-1"]


def test_preferred_allocation_on_910b_keeps_jobs_inside_one_numa_node(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake(MESH_910B))
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        assert plugin.preferred(NPUS, 2) == ["npu-0", "npu-1"]
        assert plugin.preferred(NPUS[1:], 2) == ["npu-2", "npu-3"]
        assert plugin.preferred(NPUS[1:], 1) == ["npu-1"]


def test_preferred_allocation_keeps_must_include(kubelet: FakeKubelet, start_plugin) -> None:
    start_plugin(fake(RINGS_910A))
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        assert plugin.preferred(NPUS, 2, must=["npu-6"]) == ["npu-6", "npu-4"]


def test_allocate_gives_device_nodes_visible_devices_and_driver_mounts(
    kubelet: FakeKubelet, start_plugin
) -> None:
    start_plugin(fake(MESH_910B))
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        response = plugin.allocate(["npu-5", "npu-2"], ["npu-7"])
    first, second = response.container_responses
    assert dict(first.envs) == {"ASCEND_VISIBLE_DEVICES": "2,5"}
    assert [(d.host_path, d.container_path, d.permissions) for d in first.devices] == [
        (p, p, "rw")
        for p in (
            "/dev/davinci2",
            "/dev/davinci5",
            "/dev/davinci_manager",
            "/dev/devmm_svm",
            "/dev/hisi_hdc",
        )
    ]
    assert [(m.host_path, m.container_path, m.read_only) for m in first.mounts] == [
        ("/usr/local/Ascend", "/usr/local/Ascend", True)
    ]
    assert list(first.cdi_devices) == []
    assert dict(second.envs) == {"ASCEND_VISIBLE_DEVICES": "7"}


def test_allocate_names_cdi_devices_that_the_written_spec_defines(
    kubelet: FakeKubelet, start_plugin
) -> None:
    cdi_root = kubelet.dir.parent / "cdi"
    start_plugin(fake(MESH_910B), cdi_enabled=True, cdi_root=cdi_root)
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        response = plugin.allocate(["npu-1", "npu-0"])
    names = [d.name for d in response.container_responses[0].cdi_devices]
    assert names == ["k8s.npu.huawei.com/npu=npu-0", "k8s.npu.huawei.com/npu=npu-1"]
    spec = json.loads((cdi_root / "k8s.npu.huawei.com-npu.json").read_text())
    assert spec["kind"] == "k8s.npu.huawei.com/npu"
    assert {d["name"] for d in spec["devices"]} == set(NPUS)


def test_allocate_refuses_unknown_ids_naming_them(kubelet: FakeKubelet, start_plugin) -> None:
    start_plugin(fake(MESH_910B))
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin, pytest.raises(grpc.RpcError) as refused:
        plugin.allocate(["npu-1", "npu-42", "gpu-0"])
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "gpu-0, npu-42" in refused.value.details()


def test_allocate_refuses_unhealthy_devices(kubelet: FakeKubelet, start_plugin) -> None:
    hardware = fake(MESH_910B)
    start_plugin(hardware, health_interval=0.1)
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        stream = plugin.watch()
        hardware.set_health(6, Health.UNHEALTHY)
        stream.wait_for(lambda listing: listing["npu-6"][0] == "Unhealthy")
        with pytest.raises(grpc.RpcError) as refused:
            plugin.allocate(["npu-6"])
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "npu-6 (Unhealthy)" in refused.value.details()


def test_pre_start_container_answers_empty(kubelet: FakeKubelet, start_plugin) -> None:
    start_plugin(fake(MESH_910B))
    kubelet.wait_for_registrations(1)
    with kubelet.plugin(SOCKET) as plugin:
        assert plugin.pre_start(["npu-0"]).ByteSize() == 0
