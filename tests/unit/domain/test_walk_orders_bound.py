"""walk_orders on nodes with many slices: the count of orders is known before any is built.

A 16-chip node with vNPUs publishes one slice per chip; listing the 16! orders of its slices to
compare them with a limit of 24 grew without bound (23 GB before it was killed).
"""

import tracemalloc

import attrs

from npu_dra.domain.ids import PoolName
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.scheduling.pools import MAX_WALK_ORDERS, gather_pools, walk_orders
from tests.unit.domain.test_allocation import node


def _one_slice_per_device(whole: ResourceSlice, count: int) -> tuple[ResourceSlice, ...]:
    devices = (whole.devices * count)[:count]
    return tuple(
        attrs.evolve(
            whole,
            name=f"slice-{i:04}",
            devices=(attrs.evolve(d, name=f"npu-{i}"),),
            pool=attrs.evolve(whole.pool, resource_slice_count=count),
        )
        for i, d in enumerate(devices)
    )


def test_many_slices_give_only_the_reversed_order_without_listing_the_others() -> None:
    (whole,) = node("node-a")
    pools = gather_pools(_one_slice_per_device(whole, 9))  # 9! = 362,880 orders
    tracemalloc.start()
    try:
        orders = list(walk_orders(pools))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(orders) == 1
    assert [c.slice for c in orders[0][0].devices] == [f"slice-{i:04}" for i in range(8, -1, -1)]
    assert peak < 1_000_000, f"walk_orders held {peak} bytes for one order"


def test_two_thousand_slices_end_at_once_with_the_reversed_order() -> None:
    (whole,) = node("node-a")
    pools = gather_pools(_one_slice_per_device(whole, 2000))
    (only,) = walk_orders(pools)
    assert only[0].devices[0].slice == "slice-1999"


def test_many_pools_are_counted_without_listing_their_orders() -> None:
    slices = tuple(
        attrs.evolve(s, name=f"{s.name}-{i}", pool=attrs.evolve(s.pool, name=PoolName(f"p{i}")))
        for i in range(300)
        for s in node("node-a")
    )
    (only,) = walk_orders(gather_pools(slices))
    assert only[0].name == "p99"  # pools sort by name: p99 is the last of p0..p99..p299
    assert MAX_WALK_ORDERS == 24
