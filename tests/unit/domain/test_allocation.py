"""The offline allocator follows the scheduler's rules for the seed's claims.

Selectors are evaluated by a small fake that understands exactly two shapes, so these tests are
about allocation, not CEL: `device.driver == "x"` and `device.attributes["d"].numaNode == N`.
"""

import itertools
import re
from collections.abc import Sequence

import attrs
import pytest

from npu_dra.domain.claims import (
    Allocation,
    AllocationMode,
    ClaimRef,
    ClaimSpec,
    Constraint,
    DeviceClass,
    DeviceRequest,
    ResourceClaim,
)
from npu_dra.domain.device import Device, Health, NodeInventory
from npu_dra.domain.errors import SelectorError
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceClassName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.pool import ResourceSlice, desired_slices
from npu_dra.domain.scheduling.allocator import (
    AllocationError,
    SearchBudgetExceeded,
    allocate_claims,
)
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.pools import DeviceKey, gather_pools, walk_orders
from npu_dra.domain.scheduling.selectors import SelectorDevice
from tests.support.allocation import Unsatisfiable, allocate

NPU = DriverName("npu.huawei.com")
OTHER = DriverName("other.example.com")
NUMA = (6, 6, 4, 4, 0, 0, 2, 2)  # Atlas 800I A2: NPUs paired per NUMA node
CLASS = DeviceClassName("npu.huawei.com")
CLASSES = {
    CLASS: DeviceClass(CLASS, ('device.driver == "npu.huawei.com"',)),
    DeviceClassName("other"): DeviceClass(
        DeviceClassName("other"), ('device.driver == "other.example.com"',)
    ),
}
TOPOLOGY = "npu.huawei.com/topologyGroup"
NUMA_NODE = "npu.huawei.com/numaNode"


class FakeSelectors:
    """The SelectorEvaluator port for two expression shapes; anything else is a SelectorError."""

    _DRIVER = re.compile(r'^device\.driver == "([^"]+)"$')
    _NUMA = re.compile(r'^device\.attributes\["([^"]+)"\]\.numaNode == (\d+)$')

    def __init__(self) -> None:
        self.evaluated: list[str] = []

    def matches(self, *, expression: str, device: SelectorDevice) -> bool:
        self.evaluated.append(expression)
        if found := self._DRIVER.match(expression):
            return device.driver == found[1]
        if found := self._NUMA.match(expression):
            return device.attributes.get(found[1], {}).get("numaNode") == int(found[2])
        raise SelectorError(expression, "the fake understands only two shapes")


def numa(node: int, domain: str = "npu.huawei.com") -> str:
    return f'device.attributes["{domain}"].numaNode == {node}'


def node(
    name: str,
    *,
    driver: DriverName = NPU,
    rings: bool = False,
    unhealthy: Sequence[int] = (),
    generation: int = 1,
) -> tuple[ResourceSlice, ...]:
    devices = tuple(
        Device(
            name=DeviceName(f"npu-{i}"),
            physical_id=i,
            logic_id=i,
            card_id=i,
            chip_id=0,
            chip_name="910B4",
            memory_bytes=32 * 2**30,
            health=Health.UNHEALTHY if i in unhealthy else Health.HEALTHY,
            numa_node=n,
            topology_group=f"ring-{i // 4}" if rings else "ring-0",
        )
        for i, n in enumerate(NUMA)
    )
    inventory = NodeInventory(NodeName(name), devices)
    return desired_slices(inventory, driver=driver, generation=generation)


def request(
    name: str = "npu",
    *,
    selectors: Sequence[str] = (),
    mode: AllocationMode = AllocationMode.EXACT_COUNT,
    count: int = 1,
    admin: bool = False,
    device_class: str = CLASS,
) -> DeviceRequest:
    return DeviceRequest(
        RequestName(name), DeviceClassName(device_class), tuple(selectors), mode, count, admin
    )


def claim(*requests: DeviceRequest, constraints: Sequence[Constraint] = ()) -> ResourceClaim:
    ref = ClaimRef(Namespace("ascend-dra"), ClaimName("claim"), ClaimUID("uid-1"))
    return ResourceClaim(ref, ClaimSpec(requests or (request(),), tuple(constraints)))


def run(
    wanted: ResourceClaim,
    slices: Sequence[ResourceSlice],
    *,
    in_use: Sequence[DeviceKey] = (),
) -> Allocation | Unsatisfiable:
    return allocate(
        wanted,
        slices=slices,
        classes=CLASSES,
        in_use=frozenset(in_use),
        evaluator=FakeSelectors(),
    )


def granted(result: Allocation | Unsatisfiable) -> Allocation:
    assert isinstance(result, Allocation), result
    return result


def refused(result: Allocation | Unsatisfiable) -> str:
    assert isinstance(result, Unsatisfiable), result
    return result.reason


def devices(result: Allocation | Unsatisfiable) -> list[str]:
    return [r.device for r in granted(result).results]


def busy(node_name: str, *indexes: int, driver: DriverName = NPU) -> list[DeviceKey]:
    return [(driver, PoolName(node_name), DeviceName(f"npu-{i}")) for i in indexes]


def test_class_and_request_selectors_must_both_match() -> None:
    slices = (*node("node-a", driver=OTHER), *node("node-a"))
    result = granted(run(claim(request(selectors=[numa(6)], mode=AllocationMode.ALL)), slices))
    assert [(r.driver, r.device) for r in result.results] == [(NPU, "npu-0"), (NPU, "npu-1")]


def test_the_class_selector_alone_restricts_the_driver() -> None:
    slices = (*node("node-a"), *node("node-b", driver=OTHER))
    result = granted(run(claim(request(device_class="other")), slices))
    assert result.node_name == "node-b"
    assert [r.driver for r in result.results] == [OTHER]


def test_exact_count_takes_count_distinct_devices_from_one_node() -> None:
    result = granted(run(claim(request(count=3)), (*node("node-a"), *node("node-b"))))
    assert result.node_name == "node-a"
    assert len({r.device for r in result.results}) == 3
    assert {r.pool for r in result.results} == {"node-a"}
    assert {r.request for r in result.results} == {"npu"}


def test_exact_count_beyond_a_node_is_unsatisfiable_with_a_reason() -> None:
    reason = refused(run(claim(request(count=9)), node("node-a")))
    assert "cannot allocate all claims" in reason
    assert "cannot allocate all claims" in reason


def test_all_takes_every_matching_device_and_nothing_else() -> None:
    assert devices(
        run(claim(request(selectors=[numa(4)], mode=AllocationMode.ALL)), node("a"))
    ) == [
        "npu-2",
        "npu-3",
    ]


def test_all_without_selectors_takes_the_whole_node() -> None:
    assert len(devices(run(claim(request(mode=AllocationMode.ALL)), node("node-a")))) == 8


def test_all_fails_on_a_node_where_any_match_is_in_use() -> None:
    wanted = claim(request(selectors=[numa(6)], mode=AllocationMode.ALL))
    assert "cannot allocate all claims" in refused(
        run(wanted, node("node-a"), in_use=busy("node-a", 1))
    )
    moved = granted(run(wanted, (*node("node-a"), *node("node-b")), in_use=busy("node-a", 1)))
    assert moved.node_name == "node-b"
    assert [r.device for r in moved.results] == ["npu-0", "npu-1"]


def test_all_fails_when_nothing_matches() -> None:
    wanted = claim(request(selectors=[numa(9)], mode=AllocationMode.ALL))
    assert "cannot allocate all claims" in refused(run(wanted, node("node-a")))


def test_unhealthy_devices_are_never_offered() -> None:
    wanted = claim(request(selectors=[numa(6)], mode=AllocationMode.ALL))
    assert devices(run(wanted, node("node-a", unhealthy=[0]))) == ["npu-1"]


def test_a_device_in_use_is_never_given_to_another_claim() -> None:
    in_use = busy("node-a", *range(7))
    assert devices(run(claim(request()), node("node-a"), in_use=in_use)) == ["npu-7"]
    assert "cannot allocate all claims" in refused(
        run(claim(request()), node("node-a"), in_use=busy("node-a", *range(8)))
    )


def test_in_use_is_keyed_by_pool_so_the_same_name_elsewhere_is_free() -> None:
    result = granted(
        run(claim(request(count=8)), (*node("node-a"), *node("node-b")), in_use=busy("node-a", 0))
    )
    assert result.node_name == "node-b"


def test_two_requests_of_one_claim_never_share_a_device() -> None:
    both = granted(run(claim(request("a", count=4), request("b", count=4)), node("node-a")))
    assert len({r.device for r in both.results}) == 8
    assert "cannot allocate all claims" in refused(
        run(claim(request("a", count=4), request("b", count=5)), node("node-a"))
    )


def test_admin_access_may_use_devices_other_claims_hold() -> None:
    everything = busy("node-a", *range(8))
    single = granted(run(claim(request(admin=True)), node("node-a"), in_use=everything))
    assert single.results[0].admin_access
    watch_all = claim(request(admin=True, mode=AllocationMode.ALL))
    assert len(devices(run(watch_all, node("node-a"), in_use=everything))) == 8


def test_match_attribute_keeps_devices_in_one_topology_group() -> None:
    """A 910 A+X node has two rings of four; with npu-0 taken only ring-1 holds four free."""
    slices = node("ax", rings=True)
    in_use = busy("ax", 0)
    free_four = claim(request(count=4))
    assert devices(run(free_four, slices, in_use=in_use)) == ["npu-1", "npu-2", "npu-3", "npu-4"]
    one_ring = claim(request(count=4), constraints=[Constraint(TOPOLOGY)])
    assert devices(run(one_ring, slices, in_use=in_use)) == ["npu-4", "npu-5", "npu-6", "npu-7"]


def test_match_attribute_spans_all_requests_unless_it_names_some() -> None:
    slices = node("ax", rings=True)
    in_use = busy("ax", 0)
    both = claim(request("a", count=2), request("b", count=2), constraints=[Constraint(TOPOLOGY)])
    assert devices(run(both, slices, in_use=in_use)) == ["npu-4", "npu-5", "npu-6", "npu-7"]
    only_b = claim(
        request("a", count=2),
        request("b", count=2),
        constraints=[Constraint(TOPOLOGY, (RequestName("b"),))],
    )
    assert devices(run(only_b, slices, in_use=in_use)) == ["npu-1", "npu-2", "npu-4", "npu-5"]


def test_a_match_attribute_no_group_can_satisfy_is_unsatisfiable() -> None:
    wanted = claim(request(count=5), constraints=[Constraint(TOPOLOGY)])
    assert "cannot allocate all claims" in refused(run(wanted, node("ax", rings=True)))


def test_a_match_attribute_no_device_has_is_unsatisfiable() -> None:
    wanted = claim(request(), constraints=[Constraint("npu.huawei.com/rack")])
    assert "cannot allocate all claims" in refused(run(wanted, node("node-a")))


def test_every_match_attribute_constraint_holds() -> None:
    """Ring-0 has NUMA nodes 6,6,4,4; with npu-0 taken, two NPUs sharing both are npu-2, npu-3."""
    wanted = claim(request(count=2), constraints=[Constraint(TOPOLOGY), Constraint(NUMA_NODE)])
    result = run(wanted, node("ax", rings=True), in_use=busy("ax", 0))
    assert devices(result) == ["npu-2", "npu-3"]


def test_all_with_a_match_attribute_fails_when_the_matches_differ() -> None:
    """All means every match; it may not quietly shrink to one ring to satisfy the constraint."""
    wanted = claim(request(mode=AllocationMode.ALL), constraints=[Constraint(TOPOLOGY)])
    reason = refused(run(wanted, node("ax", rings=True)))
    assert "because a claim constraint would not be satisfied" in reason
    assert len(devices(run(wanted, node("mesh")))) == 8


def test_a_missing_device_class_is_the_reason() -> None:
    reason = refused(run(claim(request(device_class="gpu.example.com")), node("node-a")))
    assert reason == (
        "claim ascend-dra/claim, request npu: could not retrieve device class gpu.example.com: "
        'deviceclass.resource.k8s.io "gpu.example.com" not found'
    )


def test_a_selector_error_is_the_reason_in_the_schedulers_words() -> None:
    broken = 'device.attributes["npu.huawei.com"].memory > 1'
    reason = refused(run(claim(request(selectors=[broken])), node("node-a")))
    assert reason.startswith("claim ascend-dra/claim: selector #0: CEL runtime error: ")
    assert "the fake understands only two shapes" in reason


def test_no_slices_is_a_reason_too() -> None:
    assert refused(run(claim(), ())) == "no ResourceSlices"


def test_only_the_newest_generation_of_a_pool_counts() -> None:
    stale = node("node-a", generation=1)
    current = node("node-a", generation=2, unhealthy=range(1, 8))
    wanted = claim(request(mode=AllocationMode.ALL))
    assert devices(run(wanted, (*stale, *current))) == ["npu-0"]


def test_the_choice_is_deterministic_whatever_order_slices_arrive_in() -> None:
    slices = [*node("node-b"), *node("node-a")]
    wanted = claim(request("a", count=3), request("b", selectors=[numa(2)]))
    first = run(wanted, slices)
    assert run(wanted, list(reversed(slices))) == first
    assert run(wanted, slices) == first
    assert granted(first).node_name == "node-a"


def test_a_claim_that_fits_no_node_is_refused() -> None:
    reason = refused(run(claim(request(count=9)), (*node("node-a"), *node("node-b"))))
    assert reason == "cannot allocate all claims"


@pytest.mark.parametrize("mode", list(AllocationMode))
def test_every_result_names_its_request_driver_and_pool(mode: AllocationMode) -> None:
    result = granted(run(claim(request(mode=mode)), node("node-a")))
    assert {(r.request, r.driver, r.pool) for r in result.results} == {("npu", NPU, "node-a")}


def test_an_earlier_request_gives_way_when_a_later_one_needs_its_devices() -> None:
    """NUMA 6 holds only npu-0 and npu-1: a greedy pick for "any" would take them and starve
    "numa6"; the search backs off to the next devices, as the scheduler does."""
    wanted = claim(request("any", count=2), request("numa6", count=2, selectors=[numa(6)]))
    result = granted(run(wanted, node("node-a")))
    by_request = {r.request: [] for r in result.results}
    for r in result.results:
        by_request[r.request].append(r.device)
    assert by_request == {"any": ["npu-2", "npu-3"], "numa6": ["npu-0", "npu-1"]}


def test_a_constraint_pinned_by_one_request_binds_the_others() -> None:
    """With npu-0 in use, "a" would open ring-0 with npu-1; ring-0 then has only npu-2 and npu-3
    left for "b"'s three, so the search moves both requests to ring-1."""
    wanted = claim(request("a", count=1), request("b", count=3), constraints=[Constraint(TOPOLOGY)])
    result = granted(run(wanted, node("ax", rings=True), in_use=busy("ax", 0)))
    assert [r.device for r in result.results] == ["npu-4", "npu-5", "npu-6", "npu-7"]


def test_two_claims_of_a_pod_are_allocated_together_with_backtracking() -> None:
    """The first claim takes any NPU, the second both NUMA-6 NPUs: the first would take npu-0,
    but the scheduler backtracks across a pod's claims, so it gives way to npu-2."""
    first = claim(request())
    second_ref = ClaimRef(Namespace("ascend-dra"), ClaimName("second"), ClaimUID("uid-2"))
    second = ResourceClaim(second_ref, ClaimSpec((request(selectors=[numa(6)], count=2),), ()))
    found = allocate_claims(
        [first, second],
        node=NodeName("node-a"),
        pools=gather_pools(node("node-a")),
        classes=CLASSES,
        allocated=set(busy("node-a", 3, 4, 5, 6, 7)),
        matcher=Matcher(FakeSelectors()),
    )
    assert found is not None
    assert [[r.device for r in a.results] for a in found] == [["npu-2"], ["npu-0", "npu-1"]]


def test_distinct_attribute_needs_the_attribute_but_lets_values_repeat() -> None:
    """v1.34.3 compares distinctAttribute values by pointer: no two devices ever clash."""
    repeating = claim(request(count=2), constraints=[Constraint(None, (), NUMA_NODE)])
    assert devices(run(repeating, node("node-a"))) == ["npu-0", "npu-1"]  # both NUMA node 6
    missing = claim(request(), constraints=[Constraint(None, (), "npu.huawei.com/rack")])
    assert "cannot allocate all claims" in refused(run(missing, node("node-a")))


def test_a_cel_runtime_error_is_an_error_for_the_pod_not_a_misfit() -> None:
    broken = 'device.attributes["npu.huawei.com"].memory > 1'
    with pytest.raises(AllocationError, match="selector #0: CEL runtime error"):
        allocate_claims(
            [claim(request(selectors=[broken]))],
            node=NodeName("node-a"),
            pools=gather_pools(node("node-a")),
            classes=CLASSES,
            allocated=set(),
            matcher=Matcher(FakeSelectors()),
        )


def test_first_available_takes_the_first_subrequest_that_fits() -> None:
    from npu_dra.domain.claims import DeviceSubRequest

    subs = (
        DeviceSubRequest(RequestName("eight"), CLASS, (), AllocationMode.EXACT_COUNT, 8),
        DeviceSubRequest(RequestName("two"), CLASS, (), AllocationMode.EXACT_COUNT, 2),
    )
    wanted = claim(DeviceRequest(RequestName("npu"), DeviceClassName(""), first_available=subs))
    result = granted(run(wanted, node("node-a"), in_use=busy("node-a", 0)))
    assert [(r.request, r.device) for r in result.results] == [
        ("npu/two", "npu-1"),
        ("npu/two", "npu-2"),
    ]


def test_admin_access_may_not_take_a_device_twice_in_one_claim() -> None:
    wanted = claim(request("a", admin=True, count=8), request("b", admin=True))
    assert refused(run(wanted, node("node-a"))) == "cannot allocate all claims"


def test_more_than_32_devices_in_a_claim_is_an_error() -> None:
    reason = refused(run(claim(request(count=33)), node("node-a")))
    assert "exceeds the claim limit of 32" in reason


def test_a_search_past_its_step_budget_is_reported_not_guessed() -> None:
    with pytest.raises(SearchBudgetExceeded, match="gave up after 3 search steps"):
        allocate_claims(
            [claim(request(count=4))],
            node=NodeName("node-a"),
            pools=gather_pools(node("node-a")),
            classes=CLASSES,
            allocated=set(),
            matcher=Matcher(FakeSelectors()),
            budget=3,
        )


def _split(slices: tuple[ResourceSlice, ...], *, pools: bool) -> tuple[ResourceSlice, ...]:
    """The node's devices in two slices: of one pool, or of two pools."""
    (whole,) = slices
    halves = (whole.devices[:4], whole.devices[4:])
    return tuple(
        attrs.evolve(
            whole,
            name=f"slice-{i}",
            devices=half,
            pool=attrs.evolve(
                whole.pool,
                name=PoolName(f"{whole.pool.name}-{i}") if pools else whole.pool.name,
                resource_slice_count=1 if pools else 2,
            ),
        )
        for i, half in enumerate(halves)
    )


@pytest.mark.parametrize("pools", [False, True], ids=["slices", "pools"])
def test_walk_orders_give_every_other_order_of_a_nodes_slices(pools: bool) -> None:
    gathered = gather_pools(_split(node("node-a"), pools=pools))
    orders = list(walk_orders(gathered))
    firsts = [
        [c.slice for c in itertools.chain.from_iterable(p.devices for p in o)] for o in orders
    ]
    assert len(orders) == 1
    assert firsts[0] == ["slice-1"] * 4 + ["slice-0"] * 4
    assert [c.device.name for p in orders[0] for c in p.devices][:4] == [
        f"npu-{i}" for i in (4, 5, 6, 7)
    ]  # a slice keeps its own device order
    assert list(walk_orders(gather_pools(node("node-a")))) == []  # one slice: one order


def test_walk_orders_beyond_the_limit_give_only_the_reversed_order() -> None:
    slices = tuple(
        attrs.evolve(s, name=f"{s.name}-{i}", pool=attrs.evolve(s.pool, name=PoolName(f"p{i}")))
        for i in range(5)
        for s in node("node-a")
    )  # five pools: 120 orders
    (only,) = walk_orders(gather_pools(slices))
    assert [p.name for p in only] == ["p4", "p3", "p2", "p1", "p0"]
