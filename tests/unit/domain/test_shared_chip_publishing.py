"""Shared chips as a node publishes them (domain/chip_sharing/policy.py, desired_slices): one
multi-allocatable
device per chip where consumable capacity is served, else fixed share devices in its place;
no vNPUs on a shared chip; the slice limits still hold; unhealthy chips as chips are."""

from __future__ import annotations

import attrs
import pytest

from npu_dra.adapters.kube_shapes.slices import slice_from_api, slice_to_api
from npu_dra.domain.chip_sharing.policy import SharingPolicy, share_device_name, share_of
from npu_dra.domain.device import Device, Health, NodeInventory
from npu_dra.domain.device_taints import TaintPolicy
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import (
    MAX_DEVICES_PER_SLICE,
    MAX_DEVICES_PER_SLICE_WITH_TAINTS,
    CapacityRange,
    PublishedDevice,
    RequestPolicy,
    ResourceSlice,
    desired_slices,
)
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.vnpu.templates import Template, VnpuOffer

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
GI, MI = 2**30, 2**20
NPU_1 = frozenset({DeviceName("npu-1")})


def chip(
    i: int, *, memory: int = 32 * GI, cores: int | None = 20, health: Health = Health.HEALTHY
) -> Device:
    return Device(DeviceName(f"npu-{i}"), i, i, 0, i, "910B4", memory, health, aicore_count=cores)


def devices(slices: tuple[ResourceSlice, ...]) -> dict[str, PublishedDevice]:
    return {d.name: d for s in slices for d in s.devices}


def publish(
    inventory: NodeInventory,
    *,
    sharing: SharingPolicy | None = None,
    taints: TaintPolicy | None = None,
) -> tuple[ResourceSlice, ...]:
    return desired_slices(inventory, driver=DRIVER, generation=0, sharing=sharing, taints=taints)


def q(value: int) -> Quantity:
    return Quantity.of_bytes(value)


def api_server_accepts(device: PublishedDevice) -> bool:
    """kubernetes v1.36.3 pkg/apis/resource/validation/validation.go, validateRequestPolicyRange:
    min <= value, min <= default, min + step <= value, (default - min) % step == 0."""
    for name, policy in device.request_policies.items():
        value, span, default = device.capacity[name].value, policy.valid_range, policy.default
        if span is None:
            continue
        assert default is not None
        if span.minimum.value > value or default.value < span.minimum.value:
            return False
        if span.step is not None and (
            span.minimum.value + span.step.value > value
            or (default.value - span.minimum.value) % span.step.value
        ):
            return False
    return True


def test_with_consumable_capacity_a_shared_chip_is_published_once_multi_allocatable() -> None:
    inventory = NodeInventory(NODE, (chip(0), chip(1)))
    found = devices(publish(inventory, sharing=SharingPolicy(NPU_1, consumable=True)))
    assert sorted(found) == ["npu-0", "npu-1"]
    shared, plain = found["npu-1"], found["npu-0"]
    assert shared.allow_multiple_allocations
    assert not plain.allow_multiple_allocations
    assert shared.attributes["shared"] is True
    assert "shared" not in plain.attributes
    assert {k: v for k, v in shared.attributes.items() if k != "shared"} == plain.attributes | {
        "physicalId": 1,
        "physicId": 1,
        "logicId": 1,
        "chipId": 1,
    }
    assert shared.capacity == {"memCapacity": q(32 * GI), "aiCores": q(20)}
    assert shared.request_policies == {
        "memCapacity": RequestPolicy(q(32 * GI), valid_range=CapacityRange(q(GI), step=q(GI))),
        "aiCores": RequestPolicy(q(0), valid_range=CapacityRange(q(0), step=q(1))),
    }
    assert plain.request_policies == {}
    assert api_server_accepts(shared)


@pytest.mark.parametrize(
    "memory", [32 * GI, 21 * GI + 527 * MI, 2 * GI, 2 * GI - 1, GI, 3 * MI], ids=str
)
def test_the_memory_request_policy_is_one_the_api_server_accepts_and_takes_the_chip_whole(
    memory: int,
) -> None:
    inventory = NodeInventory(NODE, (chip(0, memory=memory, cores=0),))
    [shared] = devices(publish(inventory, sharing=SharingPolicy(consumable=True))).values()
    assert api_server_accepts(shared)
    policy = shared.request_policies["memCapacity"]
    assert policy.default is not None
    if policy.valid_range is None:  # no room for one 1 GiB step: all of it by default
        assert policy.default == q(memory)
    else:  # what a default request leaves is less than any share may ask
        assert 0 <= memory - policy.default.value < policy.valid_range.minimum.value


def test_where_it_is_not_served_fixed_shares_replace_the_chip() -> None:
    inventory = NodeInventory(NODE, (chip(0), chip(1, memory=32 * GI + 5)))
    found = devices(publish(inventory, sharing=SharingPolicy(NPU_1, shares=3)))
    assert sorted(found) == ["npu-0", "npu-1-share-0", "npu-1-share-1", "npu-1-share-2"]
    for index in range(3):
        share = found[f"npu-1-share-{index}"]
        assert share_of(share.name) == (DeviceName("npu-1"), index)
        assert share.attributes["shareIndex"] == index
        assert share.attributes["shares"] == 3
        assert share.attributes["shared"] is True
        assert share.attributes["physicalId"] == 1
        # (32 GiB + 5) // 3 rounded down to whole MiB; 20 cores // 3
        assert share.capacity == {"memCapacity": q((32 * GI + 5) // 3 // MI * MI), "aiCores": q(6)}
        assert not share.allow_multiple_allocations
        assert share.request_policies == {}
    assert "shared" not in found["npu-0"].attributes


def test_a_share_of_a_chip_without_a_core_count_has_no_core_capacity() -> None:
    inventory = NodeInventory(NODE, (chip(0, cores=None),))
    found = devices(publish(inventory, sharing=SharingPolicy(shares=2)))
    assert {name: d.capacity for name, d in found.items()} == {
        "npu-0-share-0": {"memCapacity": q(16 * GI)},
        "npu-0-share-1": {"memCapacity": q(16 * GI)},
    }


def test_all_chips_shared_and_a_named_chip_the_node_lacks_changes_nothing_else() -> None:
    inventory = NodeInventory(NODE, (chip(0), chip(1)))
    every = devices(publish(inventory, sharing=SharingPolicy(shares=2)))
    assert sorted(every) == ["npu-0-share-0", "npu-0-share-1", "npu-1-share-0", "npu-1-share-1"]
    policy = SharingPolicy(frozenset({DeviceName("npu-7")}), shares=2)
    assert publish(inventory, sharing=policy) == publish(inventory)
    assert policy.absent([DeviceName("npu-0"), DeviceName("npu-1")]) == {"npu-7"}


def test_a_gpu_shares_its_memory_capacity() -> None:
    gpu = Device(DeviceName("gpu-0"), 0, 0, 0, 0, "H100", 80 * GI, profile="gpu", uuid="GPU-1")
    inventory = NodeInventory(NODE, (gpu,))
    [shared] = devices(publish(inventory, sharing=SharingPolicy(consumable=True))).values()
    assert shared.request_policies["memory"].default == q(80 * GI)
    shares = devices(publish(inventory, sharing=SharingPolicy(shares=4)))
    assert shares["gpu-0-share-3"].capacity == {"memory": q(20 * GI)}


OFFER = VnpuOffer(
    {"aicore": 20, "memory": 32, "aicpu": 6},
    (Template("vir10_3c_16g", {"aicore": 10, "memory": 16, "aicpu": 3}),),
)


@pytest.mark.parametrize("consumable", [False, True])
@pytest.mark.parametrize("counter_slices", [False, True])
def test_a_shared_chip_offers_no_vnpus_and_the_others_keep_theirs(
    consumable: bool, counter_slices: bool
) -> None:
    chips = (chip(0), chip(1))
    offers = {c.name: OFFER for c in chips}
    inventory = NodeInventory(NODE, chips, vnpu_offers=offers, counter_slices=counter_slices)
    slices = publish(inventory, sharing=SharingPolicy(NPU_1, shares=2, consumable=consumable))
    names = set(devices(slices))
    assert any(n.startswith("npu-0-vir") for n in names)
    assert not any(n.startswith("npu-1-vir") for n in names)
    assert [c.name for s in slices for c in s.shared_counters] == ["npu-0-counters"]
    shared = {"npu-1"} if consumable else {"npu-1-share-0", "npu-1-share-1"}
    assert shared <= names
    assert consumable or "npu-1" not in names
    assert all(not devices(slices)[n].consumes_counters for n in shared)


@pytest.mark.parametrize("tainted", [False, True])
def test_many_shares_still_fit_the_slice_limits(tainted: bool) -> None:
    unhealthy = {0} if tainted else set()
    chips = tuple(chip(i, health=Health.UNHEALTHY if i in unhealthy else Health.HEALTHY)
                  for i in range(16))  # fmt: skip
    taints = TaintPolicy().for_driver(DRIVER) if tainted else None
    slices = publish(NodeInventory(NODE, chips), sharing=SharingPolicy(shares=100), taints=taints)
    limit = MAX_DEVICES_PER_SLICE_WITH_TAINTS if tainted else MAX_DEVICES_PER_SLICE
    names = [d.name for s in slices for d in s.devices]
    assert len(names) == len(set(names)) == 1600
    assert all(len(s.devices) <= limit for s in slices)
    assert {s.pool.resource_slice_count for s in slices} == {len(slices)}


def test_an_unhealthy_shared_chip_is_left_out_or_tainted_as_a_chip_is() -> None:
    inventory = NodeInventory(NODE, (chip(0, health=Health.UNHEALTHY), chip(1)))
    sharing = SharingPolicy(shares=2)
    assert sorted(devices(publish(inventory, sharing=sharing))) == [
        "npu-1-share-0",
        "npu-1-share-1",
    ]
    policy = TaintPolicy().for_driver(DRIVER)
    for consumable, names in ((False, ["npu-0-share-0", "npu-0-share-1"]), (True, ["npu-0"])):
        sharing = SharingPolicy(shares=2, consumable=consumable)
        found = devices(publish(inventory, sharing=sharing, taints=policy))
        for name in names:
            assert found[name].taints == policy.taints_of(inventory.devices[0])


@pytest.mark.parametrize("consumable", [False, True])
def test_what_is_published_reads_back_the_same_so_a_sync_finds_nothing_to_change(
    consumable: bool,
) -> None:
    inventory = NodeInventory(NODE, (chip(0, memory=21 * GI + 527 * MI), chip(1)))
    for s in publish(inventory, sharing=SharingPolicy(shares=3, consumable=consumable)):
        body = slice_to_api(s)
        body["metadata"]["name"] = "stored"
        assert slice_from_api(body) == attrs.evolve(s, name="stored")


def test_share_names_round_trip_and_other_names_are_no_shares() -> None:
    assert share_of(share_device_name(DeviceName("npu-12"), 99)) == ("npu-12", 99)
    assert share_of(DeviceName("npu-1")) is None
    assert share_of(DeviceName("npu-1-vir10-3c-16g-0")) is None
