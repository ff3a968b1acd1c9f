"""Topology-aware preference on the two layouts that matter: 910 A+X rings and a 910B mesh."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from npu_dra.domain.device import Device
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.preferred_devices import preferred_devices

MESH_NUMA = (6, 6, 4, 4, 0, 0, 2, 2)  # Atlas 800I A2: NPUs paired per NUMA node


def npu(i: int, *, group: str | None, numa: int | None = None, chip: str = "910B4") -> Device:
    return Device(
        name=DeviceName(f"npu-{i}"),
        physical_id=i,
        logic_id=i,
        card_id=i,
        chip_id=0,
        chip_name=chip,
        memory_bytes=32 << 30,
        numa_node=numa,
        topology_group=group,
    )


RINGS_910A = tuple(npu(i, group=f"ring-{i // 4}", chip="910A") for i in range(8))
MESH_910B = tuple(npu(i, group="ring-0", numa=MESH_NUMA[i]) for i in range(8))


def prefer(
    devices: tuple[Device, ...], free: list[int], size: int, must: tuple[int, ...] = ()
) -> list[int]:
    names = preferred_devices(
        devices,
        available=[DeviceName(f"npu-{i}") for i in free],
        must_include=[DeviceName(f"npu-{i}") for i in must],
        size=size,
    )
    return [int(n.removeprefix("npu-")) for n in names]


ALL = list(range(8))


@pytest.mark.parametrize(
    ("free", "size", "expected"),
    [
        (ALL, 4, [0, 1, 2, 3]),  # a 4-chip job gets one whole ring
        ([1, 2, 3, 4, 5, 6, 7], 4, [4, 5, 6, 7]),  # the broken ring is left alone
        ([3, 4, 5, 6, 7], 2, [4, 5]),  # a ring with one free chip cannot hold two
        ([1, 2, 3, 4, 5, 6, 7], 1, [1]),  # one chip: a ring with 3 free beats one with 4
        ([3, 5, 6, 7], 1, [3]),  # ... and a ring with 1 free beats one with 3
        ([2, 3, 5, 6, 7], 2, [2, 3]),  # two chips: 2 free beats 3 free
        ([0, 1, 2, 3, 5, 6, 7], 2, [0, 1]),  # ... and 4 free (even leftover) beats 3 free
        (ALL, 8, ALL),
        (ALL, 6, [0, 1, 2, 3, 4, 5]),  # too big for a ring: one whole ring plus the rest
    ],
)
def test_910a_requests_stay_inside_one_hccs_ring_when_they_fit(
    free: list[int], size: int, expected: list[int]
) -> None:
    assert prefer(RINGS_910A, free, size) == expected


def test_910a_must_include_pulls_the_rest_into_its_ring() -> None:
    assert prefer(RINGS_910A, ALL, 2, must=(5,)) == [5, 4]
    assert prefer(RINGS_910A, ALL, 4, must=(6,)) == [6, 4, 5, 7]


def test_a_job_larger_than_any_ring_takes_a_whole_ring_then_the_best_fitting_rest() -> None:
    three_rings = tuple(npu(i, group=f"ring-{i // 4}") for i in range(12))
    # free: ring-0 all 4, ring-1 three, ring-2 one; the fifth chip empties ring-2
    assert prefer(three_rings, [0, 1, 2, 3, 4, 5, 6, 11], 5) == [0, 1, 2, 3, 11]


@pytest.mark.parametrize(
    ("free", "size", "expected"),
    [
        (ALL, 2, [0, 1]),  # one NUMA node (6)
        ([1, 2, 3, 4, 5, 6, 7], 2, [2, 3]),  # NUMA 6 has one left: take the next whole pair
        ([1, 2, 3, 4, 5, 6, 7], 1, [1]),  # the lone chip first, keeping pairs whole
        (ALL, 4, [0, 1, 2, 3]),  # two whole NUMA pairs
        (ALL, 3, [0, 1, 2]),
        ([0, 2, 4, 6, 7], 2, [6, 7]),  # the only intact pair
    ],
)
def test_910b_mesh_prefers_one_numa_node(free: list[int], size: int, expected: list[int]) -> None:
    assert prefer(MESH_910B, free, size) == expected


def test_910b_must_include_prefers_its_numa_partner() -> None:
    assert prefer(MESH_910B, ALL, 2, must=(5,)) == [5, 4]


def test_unknown_available_ids_are_never_preferred() -> None:
    names = preferred_devices(
        MESH_910B[:2],
        available=[DeviceName("npu-0"), DeviceName("ghost-9")],
        must_include=[],
        size=2,
    )
    assert names == ("npu-0",)


def test_devices_without_topology_go_by_physical_id() -> None:
    plain = tuple(npu(i, group=None) for i in range(4))
    assert prefer(plain, [3, 1, 2], 2) == [1, 2]


@given(
    free=st.sets(st.integers(0, 7), min_size=1),
    must_count=st.integers(0, 3),
    extra=st.integers(0, 8),
    layout=st.sampled_from([RINGS_910A, MESH_910B]),
)
def test_answer_honours_must_include_size_and_availability(
    free: set[int], must_count: int, extra: int, layout: tuple[Device, ...]
) -> None:
    ordered = sorted(free)
    must = tuple(ordered[:must_count])
    size = len(must) + extra
    answer = prefer(layout, ordered, size, must)
    assert answer[: len(must)] == list(must)
    assert len(answer) == len(set(answer)) == min(size, len(free))
    assert set(answer) <= free
    assert answer == prefer(layout, list(reversed(ordered)), size, must)  # order-independent


def test_must_include_ids_the_kubelet_did_not_offer_are_never_returned() -> None:
    assert prefer(MESH_910B, [0, 1, 2, 3], 2, must=(6, 1)) == [1, 0]


@pytest.mark.parametrize(("size", "expected"), [(0, []), (-1, []), (1, [2]), (2, [2, 3])])
def test_the_answer_never_holds_more_than_allocation_size(size: int, expected: list[int]) -> None:
    assert prefer(MESH_910B, ALL, size, must=(2, 3, 4)) == expected


@given(
    free=st.sets(st.integers(0, 7)),
    must=st.lists(st.integers(0, 9), max_size=5),
    size=st.integers(-2, 10),
    layout=st.sampled_from([RINGS_910A, MESH_910B]),
)
def test_any_request_gets_only_offered_ids_and_at_most_size(
    free: set[int], must: list[int], size: int, layout: tuple[Device, ...]
) -> None:
    answer = prefer(layout, sorted(free), size, tuple(must))
    assert set(answer) <= free
    assert len(answer) == len(set(answer)) <= max(size, 0)
