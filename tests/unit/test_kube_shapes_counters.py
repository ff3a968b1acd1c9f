"""sharedCounters and consumesCounters on the wire (resource.k8s.io/v1) and back."""

from npu_dra.adapters.kube_shapes.slices import slice_from_api, slice_to_api
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import ResourceSlice, desired_slices
from npu_dra.domain.vnpu.templates import Template, VnpuOffer

OFFER = VnpuOffer(
    {"aicore": 20, "memory": 64, "aicpu": 6},
    (Template("vir10_3c_32g", {"aicore": 10, "memory": 32, "aicpu": 3, "venc": 0}),),
)


def vnpu_slice() -> ResourceSlice:
    chip = Device(DeviceName("npu-0"), 0, 0, 0, 0, "910B4-1", 64 * 2**30, aicore_count=20)
    inventory = NodeInventory(NodeName("n"), (chip,), vnpu_offers={chip.name: OFFER})
    (only,) = desired_slices(inventory, driver=DriverName("npu.huawei.com"), generation=1)
    return only


def test_counters_are_written_as_the_api_spells_them() -> None:
    body = slice_to_api(vnpu_slice())
    assert body["spec"]["sharedCounters"] == [
        {
            "name": "npu-0-counters",
            "counters": {"aicore": {"value": "20"}, "aicpu": {"value": "6"},
                         "memory": {"value": "64Gi"}},
        }
    ]  # fmt: skip
    part = body["spec"]["devices"][1]
    assert part["name"] == "npu-0-vir10-3c-32g-0"
    assert part["consumesCounters"] == [
        {
            "counterSet": "npu-0-counters",
            "counters": {"aicore": {"value": "10"}, "aicpu": {"value": "3"},
                         "memory": {"value": "32Gi"}},
        }
    ]  # fmt: skip


def test_counters_round_trip() -> None:
    original = vnpu_slice()
    assert slice_from_api(slice_to_api(original)) == original


def test_a_slice_without_counters_has_no_counter_fields() -> None:
    chip = Device(DeviceName("npu-0"), 0, 0, 0, 0, "910B4", 32 * 2**30)
    (only,) = desired_slices(
        NodeInventory(NodeName("n"), (chip,)), driver=DriverName("d.x"), generation=1
    )
    body = slice_to_api(only)
    assert "sharedCounters" not in body["spec"]
    assert "consumesCounters" not in body["spec"]["devices"][0]


def test_a_counters_only_slice_sets_no_devices_not_even_an_empty_list() -> None:
    """1.35+ refuses a slice with sharedCounters and a `devices` field, even an empty one."""
    chip = Device(DeviceName("npu-0"), 0, 0, 0, 0, "910B4-1", 64 * 2**30, aicore_count=20)
    inventory = NodeInventory(
        NodeName("n"), (chip,), vnpu_offers={chip.name: OFFER}, counter_slices=True
    )
    counters, devices = desired_slices(inventory, driver=DriverName("d.x"), generation=1)
    body = slice_to_api(counters)
    assert "devices" not in body["spec"]
    assert body["spec"]["sharedCounters"][0]["name"] == "npu-0-counters"
    assert slice_from_api(body) == counters
    assert "sharedCounters" not in slice_to_api(devices)["spec"]
