"""Consumable capacity (KEP-5075) as kube-scheduler's allocator decides it: a request's amount
fitted to the device's request policy, the sum over every share held to the device's capacity,
devices without allowMultipleAllocations still exclusive, per version (v1.34.3's experimental,
v1.36.3's incubating allocator) and gate.

Devices are built by hand: a 32Gi chip published as consumable (memCapacity default the whole
chip, validRange min 1Gi step 1Gi; aiCores default 0, min 0 step 1), as sharing.md decides.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from fractions import Fraction

import pytest

from npu_dra.domain.claims import (
    Allocation,
    AllocationResult,
    ClaimRef,
    ClaimSpec,
    Constraint,
    DeviceClass,
    DeviceRequest,
    ResourceClaim,
)
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
from npu_dra.domain.pool import (
    CapacityRange,
    PoolRef,
    PublishedDevice,
    RequestPolicy,
    ResourceSlice,
)
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.allocator import AllocationError, allocate_claims
from npu_dra.domain.scheduling.capacity import consumed_amount, violates
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.pools import Pool, gather_pools
from npu_dra.domain.scheduling.rules import AllocatorRules
from npu_dra.domain.scheduling.selectors import SelectorDevice
from npu_dra.domain.scheduling.shared_use import SharedUse
from npu_dra.domain.scheduling.versions import scheduler_version
from npu_dra.domain.vnpu.layout import CounterConsumption, CounterSet

DRIVER = DriverName("npu.example")
CLASS = DeviceClassName("npu")
CLASSES = {CLASS: DeviceClass(CLASS)}
V134_ON = scheduler_version("1.34", {"DRAConsumableCapacity": True}).allocator
V134_OFF = scheduler_version("1.34").allocator
V134_PARTITIONS = scheduler_version(
    "1.34", {"DRAConsumableCapacity": True, "DRAPartitionableDevices": True}
).allocator
V136 = scheduler_version("1.36").allocator
GI = 2**30


def q(text: str) -> Quantity:
    return Quantity.parse(text)


MEMORY = RequestPolicy(q("32Gi"), valid_range=CapacityRange(q("1Gi"), step=q("1Gi")))
CORES = RequestPolicy(q("0"), valid_range=CapacityRange(q("0"), step=q("1")))


class AnyDevice:
    """The selector port: no class or request here has selectors."""

    def matches(self, *, expression: str, device: SelectorDevice) -> bool:
        raise AssertionError(expression)

    def compile_error(self, *, expression: str) -> str | None:
        return None


def chip(name: str = "npu-0", *, shared: bool = True, memory: str = "32Gi") -> PublishedDevice:
    policies = {"memCapacity": MEMORY, "aiCores": CORES} if shared else {}
    return PublishedDevice(
        DeviceName(name),
        {"index": int(name.rsplit("-", 1)[1])},
        {"memCapacity": q(memory), "aiCores": q("20")},
        allow_multiple_allocations=shared,
        request_policies=policies,
    )


def pools(*devices: PublishedDevice, counters: Sequence[CounterSet] = ()) -> tuple[Pool, ...]:
    ref = PoolRef(PoolName("node-a"), 1, 1)
    return gather_pools(
        [ResourceSlice(DRIVER, NodeName("node-a"), ref, devices, "s", tuple(counters))]
    )


def claim(
    name: str, *capacities: dict[str, str], count: int = 1, constraints: Sequence[Constraint] = ()
) -> ResourceClaim:
    requests = tuple(
        DeviceRequest(
            RequestName(f"r{i}"),
            CLASS,
            count=count,
            capacity=tuple((k, q(v)) for k, v in asked.items()),
        )
        for i, asked in enumerate(capacities or ({},))
    )
    ref = ClaimRef(Namespace("demo"), ClaimName(name), ClaimUID(f"uid-{name}"))
    return ResourceClaim(ref, ClaimSpec(requests, tuple(constraints)))


def allocate(
    claims: Sequence[ResourceClaim],
    found_pools: tuple[Pool, ...],
    rules: AllocatorRules = V136,
    shared: SharedUse | None = None,
) -> tuple[Allocation, ...] | None:
    return allocate_claims(
        claims,
        node=NodeName("node-a"),
        pools=found_pools,
        classes=CLASSES,
        allocated=frozenset(),
        matcher=Matcher(AnyDevice()),
        rules=rules,
        shared=shared,
    )


def devices(found: tuple[Allocation, ...] | None) -> list[list[str]]:
    assert found is not None
    return [[r.device for r in a.results] for a in found]


def consumed(result: AllocationResult) -> dict[str, str]:
    return {name: amount.text for name, amount in result.consumed_capacity}


# --- the policy arithmetic (consumable_capacity.go) -------------------------------------------


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        ("8Gi", "8Gi"),  # on the step
        ("5632Mi", "6Gi"),  # 5.5Gi: up to the next step from the minimum
        ("100Mi", "1Gi"),  # below the minimum: the minimum
        ("40Gi", "40Gi"),  # above the capacity: kept, refused by the sum
    ],
)
def test_a_requested_amount_is_rounded_up_to_the_ranges_step(asked: str, expected: str) -> None:
    assert consumed_amount(q(asked), q("32Gi"), MEMORY) == q(expected).value


def test_an_unrequested_capacity_takes_the_default_or_without_one_the_whole_value() -> None:
    assert consumed_amount(None, q("32Gi"), MEMORY) == 32 * GI
    assert consumed_amount(None, q("20"), CORES) == 0
    assert consumed_amount(None, q("32Gi"), RequestPolicy(valid_values=(q("8Gi"),))) == 32 * GI
    assert consumed_amount(None, q("32Gi"), None) == 32 * GI
    assert consumed_amount(q("3Gi"), q("32Gi"), None) == 3 * GI  # no policy: as asked


def test_valid_values_round_up_to_the_next_value_and_refuse_above_the_last() -> None:
    policy = RequestPolicy(q("8Gi"), valid_values=(q("8Gi"), q("16Gi")))
    assert consumed_amount(q("9Gi"), q("32Gi"), policy) == 16 * GI
    assert not violates(Fraction(16 * GI), policy)
    assert consumed_amount(q("20Gi"), q("32Gi"), policy) == 20 * GI
    assert violates(Fraction(20 * GI), policy)


def test_a_range_refuses_above_its_maximum_and_off_its_step() -> None:
    policy = RequestPolicy(q("2Gi"), valid_range=CapacityRange(q("2Gi"), q("16Gi"), q("2Gi")))
    assert consumed_amount(q("17Gi"), q("32Gi"), policy) == 18 * GI
    assert violates(Fraction(18 * GI), policy)
    assert violates(Fraction(3 * GI), policy)  # not min + k * step
    assert not violates(Fraction(16 * GI), policy)


# --- the allocator ----------------------------------------------------------------------------


def test_shares_of_one_chip_go_to_several_claims_until_its_capacity_is_spent() -> None:
    claims = [claim(f"c{i}", {"memCapacity": "8Gi"}) for i in range(4)]
    found = allocate(claims, pools(chip()))
    assert devices(found) == [["npu-0"]] * 4
    assert found is not None
    result = found[0].results[0]
    assert consumed(result) == {"aiCores": "0", "memCapacity": "8Gi"}
    assert result.share_id == str(uuid.UUID(result.share_id or ""))
    assert len({a.results[0].share_id for a in found}) == 4
    assert allocate([*claims, claim("c4", {"memCapacity": "1Gi"})], pools(chip())) is None


def share_of(device: str, memory: str) -> AllocationResult:
    return AllocationResult(
        RequestName("r0"),
        DRIVER,
        PoolName("node-a"),
        DeviceName(device),
        share_id=f"share-{device}-{memory}",
        consumed_capacity=(("memCapacity", q(memory)),),
    )


def test_what_earlier_pods_hold_counts_against_the_capacity() -> None:
    held = SharedUse()
    held.add(share_of("npu-0", "28Gi"))
    assert devices(allocate([claim("c", {"memCapacity": "4Gi"})], pools(chip()), shared=held))
    assert allocate([claim("c", {"memCapacity": "5Gi"})], pools(chip()), shared=held) is None
    # the rounded amount is what counts: 3.5Gi takes 4Gi
    assert devices(allocate([claim("c", {"memCapacity": "3584Mi"})], pools(chip()), shared=held))


def test_a_claim_that_asks_no_capacity_takes_the_whole_chip_and_only_a_free_one() -> None:
    found = allocate(
        [claim("part", {"memCapacity": "8Gi"}), claim("whole")], pools(chip(), chip("npu-1"))
    )
    assert devices(found) == [["npu-0"], ["npu-1"]]
    assert found is not None
    assert consumed(found[1].results[0])["memCapacity"] == "32Gi"
    assert allocate([claim("part", {"memCapacity": "8Gi"}), claim("whole")], pools(chip())) is None


def test_an_amount_beyond_the_chip_or_a_capacity_it_lacks_never_gets_it() -> None:
    assert allocate([claim("big", {"memCapacity": "33Gi"})], pools(chip())) is None
    assert allocate([claim("odd", {"hbm": "1Gi"})], pools(chip())) is None


def test_a_device_without_multiple_allocations_stays_exclusive_and_only_its_value_binds() -> None:
    exclusive = pools(chip(shared=False))
    found = allocate([claim("a", {"memCapacity": "8Gi"})], exclusive)
    assert devices(found) == [["npu-0"]]
    assert found is not None
    assert found[0].results[0].share_id is None
    assert found[0].results[0].consumed_capacity == ()
    assert (
        allocate(
            [claim("a", {"memCapacity": "8Gi"}), claim("b", {"memCapacity": "8Gi"})], exclusive
        )
        is None
    )
    assert allocate([claim("a", {"memCapacity": "40Gi"})], exclusive) is None


def test_two_requests_of_one_claim_may_share_a_chip_unless_a_distinct_attribute_parts_them() -> (
    None
):
    two = claim("two", {"memCapacity": "8Gi"}, {"memCapacity": "8Gi"})
    assert devices(allocate([two], pools(chip(), chip("npu-1")))) == [["npu-0", "npu-0"]]
    apart = Constraint(None, distinct_attribute="index")
    parted = claim("two", {"memCapacity": "8Gi"}, {"memCapacity": "8Gi"}, constraints=[apart])
    assert devices(allocate([parted], pools(chip(), chip("npu-1")))) == [["npu-0", "npu-1"]]


def test_one_request_for_two_devices_takes_one_chip_twice_only_in_v134() -> None:
    """v1.34.3's allocateOne walks every pool from the start for each device of a request;
    v1.36.3 resumes after the previous one, so a request's devices are distinct."""
    twice = claim("twice", {"memCapacity": "8Gi"}, count=2)
    both = pools(chip(), chip("npu-1"))
    assert devices(allocate([twice], both, rules=V134_ON)) == [["npu-0", "npu-0"]]
    assert devices(allocate([twice], both, rules=V136)) == [["npu-0", "npu-1"]]
    assert allocate([twice], pools(chip()), rules=V136) is None


def test_v134_checks_the_capacity_of_the_slices_device_at_the_requests_device_index() -> None:
    """v1.34.3's allocateDevice indexes the candidate's slice with the request's device index:
    a whole chip for a request's first device is checked against npu-0, the slice's first,
    whose shares leave no room for the default (all of it); past the slice's end it panics."""
    part, whole = claim("part", {"memCapacity": "8Gi"}), claim("whole")
    both = pools(chip(), chip("npu-1"))
    assert devices(allocate([part, whole], both, rules=V136)) == [["npu-0"], ["npu-1"]]
    # in one pod the search backtracks: part gives npu-0 up, whole takes it
    assert devices(allocate([part, whole], both, rules=V134_ON)) == [["npu-1"], ["npu-0"]]
    held = SharedUse()
    held.add(share_of("npu-0", "8Gi"))  # an earlier pod's
    assert devices(allocate([whole], both, rules=V136, shared=held)) == [["npu-1"]]
    assert allocate([whole], both, rules=V134_ON, shared=held) is None
    with pytest.raises(AllocationError, match="panics"):
        allocate([claim("twice", {"memCapacity": "8Gi"}, count=2)], pools(chip()), rules=V134_ON)


def test_with_the_gate_off_a_shared_chip_is_exclusive_and_capacity_requests_are_an_error() -> None:
    found = allocate([claim("a"), claim("b")], pools(chip()), rules=V134_OFF)
    assert found is None
    only = allocate([claim("a")], pools(chip()), rules=V134_OFF)
    assert only is not None
    assert only[0].results[0].share_id is None
    with pytest.raises(AllocationError, match="DRAConsumableCapacity feature is disabled"):
        allocate([claim("a", {"memCapacity": "8Gi"})], pools(chip()), rules=V134_OFF)


def test_the_gate_picks_the_variant_that_has_consumable_capacity() -> None:
    assert scheduler_version("1.34", {"DRAConsumableCapacity": True}).variant == "experimental"
    assert scheduler_version("1.36").variant == "incubating"
    assert V136.consumable
    assert V134_ON.consumable
    assert not V134_OFF.consumable


def test_shares_of_a_chip_that_consumes_counters_take_them_once_in_v136_each_time_in_v134() -> None:
    counters = CounterSet("chip", {"cores": q("1")})
    device = PublishedDevice(
        DeviceName("npu-0"),
        {},
        {"memCapacity": q("32Gi")},
        consumes_counters=(CounterConsumption("chip", {"cores": q("1")}),),
        allow_multiple_allocations=True,
        request_policies={"memCapacity": MEMORY},
    )
    found_pools = pools(device, counters=[counters])
    two = [claim("a", {"memCapacity": "8Gi"}), claim("b", {"memCapacity": "8Gi"})]
    assert devices(allocate(two, found_pools, rules=V136)) == [["npu-0"], ["npu-0"]]
    assert devices(allocate(two[:1], found_pools, rules=V134_PARTITIONS)) == [["npu-0"]]
    assert allocate(two, found_pools, rules=V134_PARTITIONS) is None
