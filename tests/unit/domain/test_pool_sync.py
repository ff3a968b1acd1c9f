"""The resourceslice controller's generation rules, applied to what a node has stored.

Facts from the seed and the Kubernetes controller: a pool published for the first time is at
generation 1 (the seed's `pool.generation: 1` on a fresh slice); an unchanged pool is left alone;
any change rewrites every slice under one higher generation; surplus slices are deleted.
"""

from collections.abc import Sequence

import attrs

from npu_dra.domain.ids import DeviceName, DriverName, NodeName, PoolName
from npu_dra.domain.pool import PoolRef, PublishedDevice, ResourceSlice
from npu_dra.domain.pool_sync import plan_sync
from npu_dra.domain.quantity import Quantity

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("master")


def device(index: int) -> PublishedDevice:
    return PublishedDevice(
        DeviceName(f"npu-{index}"),
        {"chipName": "910B4", "physicalId": index, "numaNode": 6, "topologyGroup": "ring-0"},
        {"memCapacity": Quantity.parse("32Gi")},
    )


def desired(*groups: Sequence[int]) -> tuple[ResourceSlice, ...]:
    """Slices as desired_slices builds them: no name, generation 0, the count of slices."""
    return tuple(
        ResourceSlice(
            DRIVER,
            NODE,
            PoolRef(PoolName(NODE), 0, len(groups)),
            tuple(device(i) for i in group),
        )
        for group in groups
    )


def stored(
    generation: int, *groups: Sequence[int], names: Sequence[str] = ()
) -> tuple[ResourceSlice, ...]:
    names = names or [f"master-npu.huawei.com-{i}" for i in range(len(groups))]
    return tuple(
        attrs.evolve(s, name=name, pool=PoolRef(PoolName(NODE), generation, len(groups)))
        for s, name in zip(desired(*groups), names, strict=True)
    )


def test_a_first_publish_creates_every_slice_at_generation_1() -> None:
    plan = plan_sync((), desired(range(4), range(4, 6)))
    assert plan.updates == ()
    assert plan.deletes == ()
    assert [len(s.devices) for s in plan.creates] == [4, 2]
    assert {s.pool.generation for s in plan.creates} == {1}
    assert {s.pool.resource_slice_count for s in plan.creates} == {2}
    assert {s.name for s in plan.creates} == {None}


def test_unchanged_content_keeps_the_generation_and_writes_nothing() -> None:
    plan = plan_sync(stored(7, range(4), range(4, 8)), desired(range(4), range(4, 8)))
    assert plan.empty


def test_unchanged_content_is_recognised_whatever_order_the_api_returns_attributes_in() -> None:
    """An API server returns JSON maps with sorted keys, not in the order we sent them."""

    def sorted_maps(d: PublishedDevice) -> PublishedDevice:
        return attrs.evolve(
            d, attributes=dict(sorted(d.attributes.items())), capacity=dict(d.capacity)
        )

    from_api = tuple(
        attrs.evolve(s, devices=tuple(map(sorted_maps, s.devices))) for s in stored(2, range(8))
    )
    assert list(from_api[0].devices[0].attributes) != list(device(0).attributes)
    assert plan_sync(from_api, desired(range(8))).empty


def test_unchanged_slices_stored_in_another_order_are_still_unchanged() -> None:
    plan = plan_sync(
        stored(3, range(4, 8), range(4), names=["b", "a"]), desired(range(4), range(4, 8))
    )
    assert plan.empty


def test_a_change_bumps_the_generation_and_rewrites_every_slice() -> None:
    before = stored(3, range(4), range(4, 8), names=["s-0", "s-1"])
    plan = plan_sync(before, desired(range(4), range(4, 7)))  # npu-7 went away
    assert plan.creates == ()
    assert plan.deletes == ()
    assert sorted(s.name or "" for s in plan.updates) == ["s-0", "s-1"]
    assert {s.pool.generation for s in plan.updates} == {4}
    assert {s.pool.resource_slice_count for s in plan.updates} == {2}
    assert sorted(d.name for s in plan.updates for d in s.devices) == sorted(
        d.name for s in desired(range(4), range(4, 7)) for d in s.devices
    )


def test_a_changed_attribute_is_a_change() -> None:
    changed = desired(range(2))
    moved = attrs.evolve(
        changed[0].devices[1], attributes={**changed[0].devices[1].attributes, "numaNode": 4}
    )
    edited = (attrs.evolve(changed[0], devices=(changed[0].devices[0], moved)),)
    plan = plan_sync(stored(1, range(2)), edited)
    assert [s.pool.generation for s in plan.updates] == [2]


def test_growing_updates_the_stored_slices_and_creates_the_rest() -> None:
    plan = plan_sync(stored(1, range(2), names=["s-0"]), desired(range(2), range(2, 4)))
    assert [s.name for s in plan.updates] == ["s-0"]
    assert [s.name for s in plan.creates] == [None]
    assert {s.pool.generation for s in (*plan.updates, *plan.creates)} == {2}
    assert {s.pool.resource_slice_count for s in (*plan.updates, *plan.creates)} == {2}
    assert plan.deletes == ()


def test_shrinking_deletes_the_surplus_slices() -> None:
    before = stored(5, range(2), range(2, 4), range(4, 6), names=["s-0", "s-1", "s-2"])
    plan = plan_sync(before, desired(range(6)))
    assert len(plan.updates) == 1
    assert plan.updates[0].pool == PoolRef(PoolName(NODE), 6, 1)
    assert sorted([*plan.deletes, plan.updates[0].name or ""]) == ["s-0", "s-1", "s-2"]
    assert plan.creates == ()


def test_an_emptied_pool_keeps_one_empty_slice_and_deletes_the_rest() -> None:
    plan = plan_sync(stored(2, range(2), range(2, 4)), desired(()))
    assert [s.devices for s in plan.updates] == [()]
    assert len(plan.deletes) == 1


def test_mixed_stored_generations_are_rewritten_under_one_newer_generation() -> None:
    newer = stored(4, range(4), names=["new"])
    older = stored(2, range(4), names=["old"])
    plan = plan_sync((*older, *newer), desired(range(4)))
    assert [s.name for s in plan.updates] == ["new"]
    assert plan.updates[0].pool.generation == 5
    assert plan.deletes == ("old",)


def test_equal_devices_under_two_generations_are_not_unchanged() -> None:
    mixed = (*stored(1, range(2), names=["a"]), *stored(2, range(2, 4), names=["b"]))
    plan = plan_sync(mixed, desired(range(2), range(2, 4)))
    assert {s.pool.generation for s in plan.updates} == {3}


def test_a_wrong_stored_slice_count_is_rewritten() -> None:
    incomplete = (attrs.evolve(stored(1, range(2))[0], pool=PoolRef(PoolName(NODE), 1, 2)),)
    plan = plan_sync(incomplete, desired(range(2)))
    assert [s.pool for s in plan.updates] == [PoolRef(PoolName(NODE), 2, 1)]


def planted(pool: str, name: str, generation: int = 3) -> ResourceSlice:
    """A slice on this node and driver, but in another pool (spec.pool.name is immutable)."""
    (one,) = stored(generation, range(2), names=[name])
    return attrs.evolve(one, pool=PoolRef(PoolName(pool), generation, 1))


def test_a_slice_of_another_pool_is_deleted_never_updated_into_ours() -> None:
    plan = plan_sync((planted("other-node", "planted"),), desired(range(4)))
    assert plan.deletes == ("planted",)
    assert plan.updates == ()
    assert [s.pool.name for s in plan.creates] == [NODE]
    assert {s.pool.generation for s in plan.creates} == {1}  # another pool's generation is not ours


def test_an_unchanged_pool_beside_a_planted_slice_only_deletes_the_planted_one() -> None:
    ours = stored(7, range(4), range(4, 8))
    plan = plan_sync((*ours, planted("other-node", "planted", 9)), desired(range(4), range(4, 8)))
    assert plan.deletes == ("planted",)
    assert (plan.updates, plan.creates) == ((), ())
