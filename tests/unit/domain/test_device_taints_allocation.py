"""With DRADeviceTaints on, the allocator takes a tainted device only for a request that tolerates
every one of its taints, as allocateDevice does (k8s.io/dynamic-resource-allocation v0.34.3).

The devices carry no attributes and the class no selectors: these tests are about taints, so no
CEL is evaluated (the evaluator refuses to be asked).
"""

from collections.abc import Sequence

import pytest

from npu_dra.domain.claims import (
    Allocation,
    AllocationMode,
    ClaimRef,
    ClaimSpec,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaim,
)
from npu_dra.domain.device_taints import DeviceTaint, TaintEffect
from npu_dra.domain.device_tolerations import DeviceToleration, TolerationOperator, tolerates
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
from npu_dra.domain.pool import PoolRef, PublishedDevice, ResourceSlice
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.allocator import allocate_claims
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.pools import gather_pools
from npu_dra.domain.scheduling.rules import AllocatorRules
from npu_dra.domain.scheduling.selectors import SelectorDevice
from npu_dra.domain.vnpu.layout import CounterConsumption, CounterSet

NPU = DriverName("npu.huawei.com")
CLASS = DeviceClassName("npu")
CLASSES = {CLASS: DeviceClass(CLASS)}
NODE = NodeName("node-a")
KEY = "npu.huawei.com/health"
UNHEALTHY = DeviceTaint(KEY, "Unhealthy", TaintEffect.NO_SCHEDULE)
CRITICAL = DeviceTaint(KEY, "Critical", TaintEffect.NO_EXECUTE)
EXISTS, EQUAL = TolerationOperator.EXISTS, TolerationOperator.EQUAL


class NoSelectors:
    """The SelectorEvaluator port, for tests whose classes and requests have no selectors."""

    def matches(self, *, expression: str, device: SelectorDevice) -> bool:
        raise AssertionError(f"no selector expected, got {expression!r}")

    def compile_error(self, *, expression: str) -> str | None:
        return None


def npu(index: int, *taints: DeviceTaint) -> PublishedDevice:
    return PublishedDevice(DeviceName(f"npu-{index}"), taints=taints)


def node(*devices: PublishedDevice, counters: Sequence[CounterSet] = ()) -> list[ResourceSlice]:
    pool = PoolRef(PoolName(NODE), 1, 1)
    return [ResourceSlice(NPU, NODE, pool, devices, "slice-0", tuple(counters))]


def request(
    *tolerations: DeviceToleration,
    count: int = 1,
    mode: AllocationMode = AllocationMode.EXACT_COUNT,
) -> DeviceRequest:
    return DeviceRequest(
        RequestName("npu"), CLASS, allocation_mode=mode, count=count, tolerations=tolerations
    )


def claim(wanted: DeviceRequest) -> ResourceClaim:
    ref = ClaimRef(Namespace("demo"), ClaimName("claim"), ClaimUID("uid-1"))
    return ResourceClaim(ref, ClaimSpec((wanted,)))


def allocate(
    wanted: DeviceRequest,
    slices: list[ResourceSlice],
    *,
    device_taints: bool = True,
    keeps: bool = True,
    counter_notes: set[NodeName] | None = None,
) -> Allocation | None:
    found = allocate_claims(
        [claim(wanted)],
        node=NODE,
        pools=gather_pools(slices),
        classes=CLASSES,
        allocated=frozenset(),
        matcher=Matcher(NoSelectors()),
        rules=AllocatorRules(device_taints=device_taints, keeps_refused_counters=keeps),
        counter_notes=counter_notes,
    )
    return None if found is None else found[0]


def taken(found: Allocation | None) -> list[str]:
    assert found is not None, "does not fit"
    return [f"{r.request}:{r.device}" for r in found.results]


def test_a_tainted_device_is_skipped_for_a_request_without_tolerations() -> None:
    slices = node(npu(0, UNHEALTHY), npu(1))
    assert taken(allocate(request(), slices)) == ["npu:npu-1"]
    assert allocate(request(count=2), slices) is None


@pytest.mark.parametrize(
    "toleration",
    [
        DeviceToleration(KEY, EQUAL, "Unhealthy"),
        DeviceToleration(KEY, EXISTS),
        DeviceToleration(operator=EXISTS),  # no key: every taint
        DeviceToleration(KEY, EQUAL, "Unhealthy", "NoSchedule"),
        DeviceToleration(KEY, EXISTS, effect="NoSchedule", toleration_seconds=0),
        DeviceToleration("", EQUAL, "Unhealthy"),  # the API allows it: any key, this value
    ],
    ids=["equal", "exists", "exists-any-key", "equal-effect", "exists-effect", "equal-any-key"],
)
def test_a_matching_toleration_takes_the_tainted_device(toleration: DeviceToleration) -> None:
    assert taken(allocate(request(toleration), node(npu(0, UNHEALTHY), npu(1)))) == ["npu:npu-0"]


@pytest.mark.parametrize(
    "toleration",
    [
        DeviceToleration(KEY, EQUAL, "Critical"),
        DeviceToleration(KEY, EQUAL),  # Equal with no value matches only an empty value
        DeviceToleration("other.example.com/health", EXISTS),
        DeviceToleration(KEY, EXISTS, effect="NoExecute"),
    ],
    ids=["other-value", "empty-value", "other-key", "other-effect"],
)
def test_a_toleration_that_does_not_match_leaves_the_device(toleration: DeviceToleration) -> None:
    assert not tolerates(toleration, UNHEALTHY)
    assert taken(allocate(request(toleration), node(npu(0, UNHEALTHY), npu(1)))) == ["npu:npu-1"]


def test_every_taint_of_a_device_must_be_tolerated() -> None:
    slices = node(npu(0, UNHEALTHY, CRITICAL), npu(1))
    one = DeviceToleration(KEY, EQUAL, "Unhealthy")
    both = (one, DeviceToleration(KEY, EQUAL, "Critical", "NoExecute"))
    assert taken(allocate(request(one), slices)) == ["npu:npu-1"]
    assert taken(allocate(request(*both), slices)) == ["npu:npu-0"]


def test_an_all_request_does_not_fit_beside_an_untolerated_tainted_device() -> None:
    """allocateOne tries an `All` request's devices in turn and gives up at the first refused:
    not an error for the pod, just no fit on this node."""
    slices = node(npu(0), npu(1, UNHEALTHY))
    assert allocate(request(mode=AllocationMode.ALL, count=0), slices) is None
    tolerant = request(DeviceToleration(KEY, EXISTS), mode=AllocationMode.ALL, count=0)
    assert taken(allocate(tolerant, slices)) == ["npu:npu-0", "npu:npu-1"]


def test_with_device_taints_off_taints_are_ignored() -> None:
    slices = node(npu(0, UNHEALTHY), npu(1, CRITICAL))
    assert taken(allocate(request(count=2), slices, device_taints=False)) == [
        "npu:npu-0",
        "npu:npu-1",
    ]
    everything = request(mode=AllocationMode.ALL, count=0)
    assert len(taken(allocate(everything, slices, device_taints=False))) == 2


def test_a_subrequest_is_allocated_with_its_own_tolerations() -> None:
    """requestAccessor.tolerations(): a firstAvailable alternative's own list counts."""
    untolerant = DeviceSubRequest(RequestName("plain"), CLASS)
    tolerant = DeviceSubRequest(
        RequestName("tolerant"), CLASS, tolerations=(DeviceToleration(KEY, EXISTS),)
    )
    wanted = DeviceRequest(RequestName("npu"), DeviceClassName(""), first_available=(untolerant,))
    slices = node(npu(0, UNHEALTHY))
    assert allocate(wanted, slices) is None
    both = DeviceRequest(
        RequestName("npu"), DeviceClassName(""), first_available=(untolerant, tolerant)
    )
    assert taken(allocate(both, slices)) == ["npu/tolerant:npu-0"]


def test_an_untolerated_partition_keeps_the_counters_it_took_as_in_v1_34_3() -> None:
    """allocateDevice v0.34.3 takes a partition's counters before the taint check and returns
    without giving them back: the clean partition of the same chip then finds none left."""
    chip = CounterSet("chip-0", {"cores": Quantity.parse("2")})
    uses_chip = (CounterConsumption("chip-0", {"cores": Quantity.parse("2")}),)
    tainted = PublishedDevice(DeviceName("vnpu-0"), consumes_counters=uses_chip, taints=(CRITICAL,))
    clean = PublishedDevice(DeviceName("vnpu-1"), consumes_counters=uses_chip)
    notes: set[NodeName] = set()
    assert allocate(request(), node(tainted, clean, counters=[chip]), counter_notes=notes) is None
    assert notes == {NODE}  # giving them back (v0.36.3's rollbackDevice) would take vnpu-1
    tolerant = request(DeviceToleration(KEY, EQUAL, "Critical"))
    assert taken(allocate(tolerant, node(tainted, clean, counters=[chip]))) == ["npu:vnpu-0"]


def test_v1_36_gives_an_untolerated_partitions_counters_back() -> None:
    """v0.36.3's allocateDevice rolls the counters back (rollbackDevice): the clean partition
    of the same chip is taken."""
    chip = CounterSet("chip-0", {"cores": Quantity.parse("2")})
    uses_chip = (CounterConsumption("chip-0", {"cores": Quantity.parse("2")}),)
    tainted = PublishedDevice(DeviceName("vnpu-0"), consumes_counters=uses_chip, taints=(CRITICAL,))
    clean = PublishedDevice(DeviceName("vnpu-1"), consumes_counters=uses_chip)
    notes: set[NodeName] = set()
    found = allocate(
        request(), node(tainted, clean, counters=[chip]), keeps=False, counter_notes=notes
    )
    assert taken(found) == ["npu:vnpu-1"]
    assert notes == set()
