"""The score plugins' formulas (domain/scheduling/scoring.py), each with numbers worked by hand
from the upstream code it ports (kubernetes v1.34.3 and v1.36.3 pkg/scheduler/framework/
plugins): integer division where Go divides integers, float64 where it uses floats."""

from npu_dra.domain.claims import (
    Allocation,
    AllocationResult,
    ClaimRef,
    ClaimSpec,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaim,
)
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceClassName,
    DeviceName,
    DriverName,
    Namespace,
    PoolName,
    RequestName,
)
from npu_dra.domain.scheduling.placement import (
    Placement,
    PreferredTerm,
    Requirement,
    SchedNode,
    Taint,
    Term,
    Toleration,
)
from npu_dra.domain.scheduling.resources import (
    GIB,
    MIB,
    NON_ZERO,
    Allocatable,
    PodRequests,
    Resources,
    Usage,
)
from npu_dra.domain.scheduling.scoring import (
    V134_SCORING,
    V136_SCORING,
    ScoredNode,
    balanced,
    dra_score,
    intolerable,
    least_allocated,
    normalized,
    preferred_weight,
    totals,
)

SPOT = Taint("spot", "PreferNoSchedule")
SMALL_NODE = Allocatable(Resources(4000, 32 * GIB))
ONE_CPU_ONE_GI = PodRequests(Resources(1000, GIB), Resources(1000, GIB), Resources(1000, GIB))


def test_normalizing_scales_to_the_highest_and_reverse_subtracts_from_100() -> None:
    # DefaultNormalizeScore: 100 * score / max, integer division; reversed: 100 - that.
    assert normalized([0, 3, 6]) == [0, 50, 100]
    assert normalized([1, 3]) == [33, 100]  # 100 * 1 / 3 = 33
    assert normalized([1, 0], reverse=True) == [0, 100]
    # max 0: reversed, every node gets 100; otherwise the zeros stay
    assert normalized([0, 0], reverse=True) == [100, 100]
    assert normalized([0, 0]) == [0, 0]


def test_only_untolerated_prefer_no_schedule_taints_count() -> None:
    node = SchedNode("n", taints=(SPOT, Taint("old", "PreferNoSchedule"), Taint("x", "NoSchedule")))
    assert intolerable(Placement(), node) == 2  # the NoSchedule taint is the filter's
    spot_tolerated = Placement(tolerations=(Toleration("spot", "Exists"),))
    assert intolerable(spot_tolerated, node) == 1
    # getAllTolerationPreferNoSchedule keeps only tolerations with no effect or PreferNoSchedule
    other_effect = Placement(tolerations=(Toleration("old", "Exists", effect="NoSchedule"),))
    assert intolerable(other_effect, node) == 2


def test_preferred_terms_add_the_weights_of_those_the_node_matches() -> None:
    east = Term((Requirement("zone", "In", ("east",)),))
    ssd = Term((Requirement("disk", "Exists"),))
    by_name = Term(fields=(Requirement("metadata.name", "In", ("n2",)),))
    placement = Placement(
        preferred=(PreferredTerm(30, east), PreferredTerm(20, ssd), PreferredTerm(5, by_name))
    )
    assert preferred_weight(placement, SchedNode("n1", {"zone": "east", "disk": "ssd"})) == 50
    assert preferred_weight(placement, SchedNode("n2", {"zone": "west"})) == 5
    assert preferred_weight(placement, SchedNode("n3")) == 0


def test_least_allocated_counts_non_zero_defaults_and_truncates() -> None:
    # A pod without requests scores as 100m and 200Mi. On an idle 8-cpu, 32Gi node:
    # cpu (8000 - 100) * 100 / 8000 = 98 (98.75), memory (32768Mi - 200Mi) * 100 / 32768Mi = 99
    # (99.39), averaged (98 + 99) / 2 = 98.
    default = Allocatable()
    assert least_allocated(NON_ZERO, default, Usage()) == 98
    # One pod there already: cpu 200m -> 97 (97.5), memory 400Mi -> 98 (98.78): 97. Two pods:
    # cpu 300m -> 96 (96.25), memory 600Mi -> 98 (98.17): 97 as well. The node with fewer pods
    # is not always the only best: the scheduler may take either.
    one, two = Usage(nonzero=NON_ZERO, pods=1), Usage(nonzero=NON_ZERO + NON_ZERO, pods=2)
    assert least_allocated(NON_ZERO, default, one) == 97
    assert least_allocated(NON_ZERO, default, two) == 97


def test_least_allocated_scores_zero_past_capacity_and_skips_a_resource_the_node_lacks() -> None:
    over = Usage(nonzero=Resources(7950, 0))
    # cpu 8050 > 8000: 0; memory (32768Mi - 200Mi) -> 99; (0 + 99) / 2 = 49
    assert least_allocated(NON_ZERO, Allocatable(), over) == 49
    # no memory allocatable: only cpu is averaged (98)
    assert least_allocated(NON_ZERO, Allocatable(Resources(8000, 0)), Usage()) == 98


def test_balanced_allocation_v134_scores_the_balance_with_the_pod() -> None:
    # 1 cpu of 4 = 0.25, 1Gi of 32Gi = 0.03125: std |0.25 - 0.03125| / 2 = 0.109375,
    # (1 - 0.109375) * 100 = 89.06 -> 89
    assert balanced(ONE_CPU_ONE_GI, SMALL_NODE, Usage(), V134_SCORING) == 89
    # fractions capped at 1: 9 cpus on 4 count as 1, memory 1/32: (1 - 0.484375) * 100 = 51
    held = Usage(requested=Resources(8000, 0))
    assert balanced(ONE_CPU_ONE_GI, SMALL_NODE, held, V134_SCORING) == 51


def test_balanced_allocation_v136_scores_the_change_the_pod_makes() -> None:
    # with the pod 89 (above), without it both fractions 0: 100.
    # 50 + (50 + 89 - 100) / 2 = 50 + 39 / 2 = 50 + 19 = 69
    assert balanced(ONE_CPU_ONE_GI, SMALL_NODE, Usage(), V136_SCORING) == 69
    # a node already at 6 of 8 cpus: with the pod 7/8 and 1/32 -> std 0.421875 -> 57;
    # without, 6/8 and 0 -> std 0.375 -> 62; 50 + (50 + 57 - 62) / 2 = 50 + 22 = 72
    held = Usage(requested=Resources(6000, 0))
    assert balanced(ONE_CPU_ONE_GI, Allocatable(), held, V136_SCORING) == 72


def test_the_weighted_sum_prefers_the_idle_node_in_both_versions() -> None:
    """tests/e2e/simulate_scenarios/resource_fit.yaml's `small`: 1 cpu and 1Gi, node a (4 cpus)
    idle, node b (8 cpus) holding a 6-cpu pod. TaintToleration gives both 100 (x3: 300).
    a: LeastAllocated cpu 75, memory 96 -> 85; balance 89 (v1.34.3) or 69 (v1.36.3).
    b: cpu (8000 - 7000) * 100 / 8000 = 12, memory (32768 - 200 - 1024)Mi -> 96 -> 54;
    balance 57 or 72. v1.34.3: 300 + 85 + 89 = 474 vs 300 + 54 + 57 = 411; v1.36.3: 454 vs 426."""
    a = ScoredNode(SchedNode("a", allocatable=SMALL_NODE), Usage())
    b = ScoredNode(SchedNode("b"), Usage(Resources(6000, 0), Resources(6000, 200 * MIB), 1))
    placement = Placement(requests=ONE_CPU_ONE_GI)
    assert totals(placement, [a, b], V134_SCORING) == [474, 411]
    assert totals(placement, [a, b], V136_SCORING) == [454, 426]


def test_taints_and_preferences_outweigh_a_pod_more() -> None:
    """tests/e2e/simulate_scenarios/preferences.yaml's `plain`: a (PreferNoSchedule, idle) gets
    taints 0, fit 98; b (one pod) taints 100 x 3, fit 97: 98 vs 397."""
    a = ScoredNode(SchedNode("a", taints=(SPOT,)), Usage())
    b = ScoredNode(SchedNode("b"), Usage(nonzero=NON_ZERO, pods=1))
    assert totals(Placement(), [a, b], V134_SCORING) == [98, 397]


def _claim(*requests: DeviceRequest, allocation: Allocation | None = None) -> ResourceClaim:
    ref = ClaimRef(Namespace("t"), ClaimName("c"), ClaimUID("uid-1"))
    return ResourceClaim(ref, ClaimSpec(requests), allocation=allocation)


def _allocated(*requests: str) -> Allocation:
    return Allocation(
        tuple(
            AllocationResult(RequestName(r), DriverName("d"), PoolName("p"), DeviceName(f"npu-{i}"))
            for i, r in enumerate(requests)
        )
    )


def test_dynamic_resources_scores_each_first_available_choice_by_its_rank() -> None:
    """computeScore (v1.36.3): 8 - the index of the subrequest taken; `exactly` scores none."""
    npu = DeviceClassName("npu")
    prioritized = DeviceRequest(
        RequestName("npu"),
        DeviceClassName(""),
        first_available=(
            DeviceSubRequest(RequestName("big"), npu, count=2),
            DeviceSubRequest(RequestName("small"), npu),
        ),
    )
    exact = DeviceRequest(RequestName("plain"), npu)
    claim = _claim(prioritized, exact)
    assert dra_score([claim], [_allocated("npu/big", "npu/big", "plain")]) == 8
    assert dra_score([claim], [_allocated("npu/small", "plain")]) == 7
    # a claim allocated before counts with its own allocation, the same on every node
    held = _claim(prioritized, allocation=_allocated("npu/small"))
    assert dra_score([held, claim], [_allocated("npu/big", "npu/big", "plain")]) == 15
    # v1.34.3 has no DynamicResources score: its rules leave the raw score out
    candidates = [ScoredNode(SchedNode("a"), Usage(), 8), ScoredNode(SchedNode("b"), Usage(), 7)]
    assert totals(Placement(), candidates, V134_SCORING) == [398, 398]
    # v1.36.3: normalized 100 and 87 (100 * 7 / 8), x2
    assert totals(Placement(), candidates, V136_SCORING) == [598, 572]
