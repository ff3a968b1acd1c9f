"""How kube-scheduler's default profile ranks the nodes a pod fits, for the score plugins whose
answer can differ between simulate's nodes. Each plugin scores every feasible node, normalizes
(helper.DefaultNormalizeScore: `100 * score / max`, reversed as `100 - that`), is multiplied by
its weight and summed (framework/runtime/framework.go `RunScorePlugins`); the highest sum wins
and ties are broken at random (schedule_one.go `selectHost`). Integer arithmetic as upstream.

Weights (apis/config/v1/default_plugins.go), sources under pkg/scheduler/framework/plugins/ at
kubernetes v1.34.3 unless named:
- TaintToleration 3 (tainttoleration/taint_toleration.go): PreferNoSchedule taints the pod's
  tolerations (effect empty or PreferNoSchedule) do not tolerate, counted, normalized reversed.
- NodeAffinity 2 (nodeaffinity/node_affinity.go; component-helpers scheduling/corev1/
  nodeaffinity `PreferredSchedulingTerms.Score`): the weights of the preferred terms the node
  matches, normalized.
- NodeResourcesFit 1 (noderesources/least_allocated.go, resource_allocation.go): per resource
  `(allocatable - requested) * 100 / allocatable` (0 when over), cpu and memory weighted 1 each,
  the node's NonZeroRequested plus the pod's requests with the non-zero defaults.
- NodeResourcesBalancedAllocation 1 (noderesources/balanced_allocation.go), skipped for a pod
  that requests no cpu or memory: `(1 - |cpu fraction - memory fraction| / 2) * 100` of the
  Requested plus the pod, fractions capped at 1; v1.36.3 scores the change the pod makes,
  `50 + (50 + with pod - without) / 2`.
- DynamicResources 2, v1.36.3 only (v1.34.3's plugin has no Score; dynamicresources.go
  `computeScore`): per allocated firstAvailable subrequest `8 - its index`, normalized.
- PodTopologySpread 2 (topology_spread.py `spread_scores`, `normalized_spread`): the pod's
  ScheduleAnyway constraints, fewer matching pods in the node's domains scoring higher.
- InterPodAffinity 2 (pod_affinity.py `topology_scores`): summed term weights of the node's
  domains, normalized from the lowest (0) to the highest (100), truncated (NormalizeScore).
ImageLocality gives every node the same score here (domain/scheduling/choose.py says why).
"""

from collections.abc import Sequence

import attrs

from npu_dra.domain.claims import Allocation, ResourceClaim
from npu_dra.domain.scheduling.placement import Placement, SchedNode
from npu_dra.domain.scheduling.resources import Allocatable, PodRequests, Resources, Usage
from npu_dra.domain.scheduling.topology_spread import normalized_spread

MAX_SCORE = 100
FIRST_AVAILABLE_MAX = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize
PREFER_NO_SCHEDULE = "PreferNoSchedule"
TAINTS, AFFINITY, FIT, BALANCED, DRA = 3, 2, 1, 1, 2  # the default profile's weights
SPREAD, PODS = 2, 2  # PodTopologySpread, InterPodAffinity


@attrs.frozen
class ScoringRules:
    """Where the versions score differently."""

    dra: bool = False  # DynamicResources scores the firstAvailable choices (v1.36.3)
    balanced_change: bool = False  # BalancedAllocation scores the pod's change (v1.36.3)


V134_SCORING = ScoringRules()
V136_SCORING = ScoringRules(dra=True, balanced_change=True)


@attrs.frozen
class ScoredNode:
    """One feasible node (or one of several alike) as the score plugins see it."""

    node: SchedNode
    usage: Usage
    dra: int = 0  # DynamicResources' score of the allocation found there (`dra_score`)
    pods: int = 0  # InterPodAffinity's, before normalizing
    spread: int | None = None  # PodTopologySpread's, before normalizing; None: none


def totals(placement: Placement, nodes: Sequence[ScoredNode], rules: ScoringRules) -> list[int]:
    """Each node's weighted sum over the plugins, in the order given."""
    taints = normalized([intolerable(placement, c.node) for c in nodes], reverse=True)
    affinity = normalized([preferred_weight(placement, c.node) for c in nodes])
    dra = normalized([c.dra for c in nodes]) if rules.dra else [0] * len(nodes)
    spread = normalized_spread([c.spread for c in nodes])
    pods = min_max([c.pods for c in nodes])
    pod = placement.requests
    found = []
    for i, c in enumerate(nodes):
        fit = least_allocated(pod.scored, c.node.allocatable, c.usage)
        balance = 0 if pod.best_effort else balanced(pod, c.node.allocatable, c.usage, rules)
        found.append(
            TAINTS * taints[i]
            + AFFINITY * affinity[i]
            + FIT * fit
            + BALANCED * balance
            + DRA * dra[i]
            + SPREAD * spread[i]
            + PODS * pods[i]
        )
    return found


def normalized(scores: Sequence[int], *, reverse: bool = False) -> list[int]:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)."""
    top = max(scores, default=0)
    if top == 0:
        return [MAX_SCORE if reverse else s for s in scores]
    scaled = (MAX_SCORE * s // top for s in scores)
    return [MAX_SCORE - s if reverse else s for s in scaled]


def min_max(scores: Sequence[int]) -> list[int]:
    """InterPodAffinity's NormalizeScore: `int(100 * (score - min) / (max - min))` in float64,
    0 everywhere when all are equal."""
    low, high = min(scores, default=0), max(scores, default=0)
    if high == low:
        return [0] * len(scores)
    return [int(float(MAX_SCORE) * (float(s - low) / float(high - low))) for s in scores]


def intolerable(placement: Placement, node: SchedNode) -> int:
    """The node's PreferNoSchedule taints that the pod's tolerations with an empty or
    PreferNoSchedule effect do not tolerate."""
    tolerations = [t for t in placement.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
    return sum(
        1
        for taint in node.taints
        if taint.effect == PREFER_NO_SCHEDULE and not any(t.tolerates(taint) for t in tolerations)
    )


def preferred_weight(placement: Placement, node: SchedNode) -> int:
    """The summed weights of the preferred node-affinity terms the node matches."""
    return sum(
        p.weight for p in placement.preferred if p.weight and p.term.matches(node.name, node.labels)
    )


def least_allocated(pod: Resources, allocatable: Allocatable, usage: Usage) -> int:
    total = weights = 0
    for capacity, requested in _cpu_memory(allocatable, usage.nonzero + pod):
        total += 0 if requested > capacity else (capacity - requested) * MAX_SCORE // capacity
        weights += 1
    return total // weights if weights else 0


def balanced(pod: PodRequests, allocatable: Allocatable, usage: Usage, rules: ScoringRules) -> int:
    with_pod = _balance(allocatable, usage.requested + pod.requested)
    if not rules.balanced_change:
        return with_pod
    # never negative (a balance is at least 50), so floor and Go's truncation agree
    change = MAX_SCORE // 2 + with_pod - _balance(allocatable, usage.requested)
    return MAX_SCORE // 2 + change // 2


def _balance(allocatable: Allocatable, requested: Resources) -> int:
    fractions = [min(float(r) / float(c), 1.0) for c, r in _cpu_memory(allocatable, requested)]
    std = abs((fractions[0] - fractions[1]) / 2) if len(fractions) == 2 else 0.0
    return int((1 - std) * float(MAX_SCORE))


def _cpu_memory(allocatable: Allocatable, requested: Resources) -> list[tuple[int, int]]:
    """(allocatable, requested) for cpu and memory, leaving out a resource the node has none of
    (calculateResourceAllocatableRequest returns 0, 0 and the scorers skip it)."""
    have = allocatable.resources
    pairs = ((have.cpu, requested.cpu), (have.memory, requested.memory))
    return [(c, r) for c, r in pairs if c != 0]


def dra_score(claims: Sequence[ResourceClaim], found: Sequence[Allocation]) -> int:
    """computeScore: each claim's allocation (its own, or the next one found for the pod), and per
    firstAvailable request the subrequest it took scores 8 less its index."""
    new = iter(found)
    score = 0
    for claim in claims:
        allocation = claim.allocation if claim.allocation is not None else next(new, None)
        taken = {r.request for r in allocation.results} if allocation is not None else set()
        for request in claim.spec.requests:
            for i, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in taken:
                    score += FIRST_AVAILABLE_MAX - i
    return score
