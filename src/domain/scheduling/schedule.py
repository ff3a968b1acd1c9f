"""One pod's scheduling cycle, as kube-scheduler's default profile runs it: the node filters
(taints, node selector and affinity), then NodeResourcesFit's (the pod's requests and one more
pod against the node's allocatable less what its pods request), PodTopologySpread's and
InterPodAffinity's (against the pods bound so far: pod_topology.py), then DRA's Filter, which
allocates all of the pod's unallocated claims together on each remaining node. An allocator
error on any node that reached DRA's Filter fails the whole cycle (the pod stays unschedulable
with it).

Among the nodes that fit, the score plugins decide and ties are broken at random (choose.py):
simulate takes one of the best and reports how many tie. On the chosen node the devices are
certain only when every order in which the scheduler may walk the node's pools and slices gives
the same ones: the other choices are reported with the decision.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial

import attrs

from npu_dra.domain.claims import Allocation, DeviceClass, ResourceClaim
from npu_dra.domain.ids import DeviceClassName, NodeName
from npu_dra.domain.scheduling.allocator import (
    DEFAULT_RULES,
    DEFAULT_STEP_BUDGET,
    AllocationError,
)
from npu_dra.domain.scheduling.choose import Choice, Fit, choose, names_nodes
from npu_dra.domain.scheduling.dra_filter import (
    KEPT_COUNTERS,
    NO_NODES,
    UNDECIDED,
    DraFilter,
    dra_filter,
)
from npu_dra.domain.scheduling.index import HOSTNAME, ClassKey, ClusterIndex, NodeState
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.placed import other_choices, placed
from npu_dra.domain.scheduling.placement import Placement, filter_reason
from npu_dra.domain.scheduling.pod_topology import TopologyCheck, topology_check
from npu_dra.domain.scheduling.resources import insufficient
from npu_dra.domain.scheduling.rules import AllocatorRules
from npu_dra.domain.scheduling.scoring import V134_SCORING, ScoringRules


@attrs.frozen
class Decision:
    node: str | None
    allocations: tuple[Allocation | None, ...] = ()
    status: str = "Bound"
    reason: str | None = None
    fitting: int = 0
    # the nodes whose search ran out of its step budget where counting did not rule them out
    undecided: tuple[str, ...] = ()
    # other allocations (same shape as `allocations`) the scheduler may make on the same node
    # when it walks the node's pools and slices in another order
    other_choices: tuple[tuple[Allocation | None, ...], ...] = ()


def schedule_pod(
    placement: Placement,
    claims: Sequence[ResourceClaim],
    *,
    index: ClusterIndex,
    classes: Mapping[DeviceClassName, DeviceClass],
    matcher: Matcher,
    budget: int = DEFAULT_STEP_BUDGET,
    rules: AllocatorRules = DEFAULT_RULES,
    scoring: ScoringRules = V134_SCORING,
) -> Decision:
    """The pod's decision; binding it (ClusterIndex.bind) is the caller's."""
    if not index.nodes:  # schedulePod's first check, before any plugin
        return Decision(None, status="Pending", reason=NO_NODES)
    missing = _missing_class(claims, classes)
    if missing:
        return Decision(None, status="Pending", reason=missing)
    pending = [c for c in claims if c.allocation is None]
    pinned = {c.allocation.node_name for c in claims if c.allocation and c.allocation.node_name}
    check = topology_check(index, placement)
    tally = dra_filter(
        pending, index=index, classes=classes, matcher=matcher, budget=budget, rules=rules
    )
    try:
        fitting = _fitting(index, placement, tally, pinned=pinned, check=check)
    except AllocationError as error:
        return Decision(None, status="Error", reason=str(error))
    if not fitting:
        return _noted(_unschedulable(index, tally), pending, rules, placement)
    choice = choose(
        fitting, placement, claims, rules=scoring, cluster_size=len(index.nodes), check=check
    )
    return _noted(_decided(claims, index, choice, tally), pending, rules, placement)


def _noted(
    decision: Decision,
    claims: Sequence[ResourceClaim],
    rules: AllocatorRules,
    placement: Placement,
) -> Decision:
    """distinctAttribute, where a claim has one, as v1.34.3 takes it (scheduling/constraints.py);
    what the pod asks that simulate does not model."""
    notes = [decision.reason]
    names = {c.distinct_attribute for claim in claims for c in claim.spec.constraints}
    names.discard(None)
    if names and not rules.distinct_values:
        notes.append(
            f"(distinctAttribute {', '.join(sorted(filter(None, names)))}: decided as "
            "kube-scheduler v1.34.3 does, whatever DRAConsumableCapacity: ignored beside "
            "matchAttribute, otherwise each device must have the attribute but values may repeat)"
        )
    if placement.unmodelled:
        notes.append(
            f"({', '.join(placement.unmodelled)}: not modelled, decided without; the scheduler "
            "may place the pod elsewhere or not at all)"
        )
    return attrs.evolve(decision, reason=" ".join(filter(None, notes)) or None)


def _fitting(
    index: ClusterIndex,
    placement: Placement,
    tally: DraFilter,
    *,
    pinned: set[NodeName],
    check: TopologyCheck,
) -> list[Fit]:
    """Per node class, least loaded first: the nodes that pass the filters and DRA's Filter,
    with the tally counting every node by why it fits or not. AllocationError fails the pod."""
    per_node = _needs_per_node_check(placement) or bool(pinned) or check.filters or check.scores
    fitting: list[Fit] = []
    for key in sorted(index.classes, key=index.least_loaded):
        passing, count = _passing(
            index, key, placement, pinned, tally.reasons, per_node=per_node, check=check
        )
        if not count:
            continue
        found = tally.tried(passing, count, partial(index.members, key))
        if found is not None:
            fitting.append(Fit(passing[0], found, tuple(passing), count))
    return fitting


def _unschedulable(index: ClusterIndex, tally: DraFilter) -> Decision:
    """No node fits: the scheduler's "0/N nodes are available: ..." as FitError.Error() words it
    (kube-scheduler v1.34.3, framework/types.go): "<count> <reason>" strings sorted as strings
    (so "1 node(s)..." comes before "15 cannot..."), joined by ", ", ending in a period."""
    total, reasons = len(index.nodes), tally.reasons
    shown = (f"{n} {why}" for why, n in reasons.items() if n and why != KEPT_COUNTERS)
    text = f"0/{total} nodes are available: {', '.join(sorted(shown))}."
    status = "Undecided" if reasons[UNDECIDED] else "Pending"
    reason = " ".join(filter(None, [text, _kept(reasons)]))
    return Decision(None, status=status, reason=reason, undecided=tuple(tally.undecided))


def _kept(reasons: Counter[str]) -> str | None:
    """Where v1.34.3's counter bookkeeping changed the answer (domain/scheduling/candidates.py)."""
    if not reasons[KEPT_COUNTERS]:
        return None
    return (
        f"(on {reasons[KEPT_COUNTERS]} node(s) decided as kube-scheduler v1.34.3 does, whose "
        "search does not give back the shared counters a partition took when it failed a claim "
        "constraint or an untolerated taint refused it; giving them back changes the answer "
        "there)"
    )


def _decided(
    claims: Sequence[ResourceClaim], index: ClusterIndex, choice: Choice, tally: DraFilter
) -> Decision:
    """The pod on the chosen node, with the other devices the scheduler may pick there."""
    representative, found, target = choice.fit.representative, choice.fit.found, choice.node
    name = target.node.name
    on_node = partial(tally.attempt, node=NodeName(representative.node.name))
    reasons = tally.reasons
    others = other_choices(on_node, representative.pools, found)
    undecided = f"{reasons[UNDECIDED]} node(s) undecided: {UNDECIDED}" if reasons[UNDECIDED] else ""
    note = "; ".join(filter(None, [undecided, _kept(reasons)])) or None
    return Decision(
        name,
        placed(claims, found, representative, target),
        reason=note,
        fitting=choice.shown,
        other_choices=tuple(placed(claims, o, representative, target) for o in others),
    )


def _missing_class(
    claims: Sequence[ResourceClaim], classes: Mapping[DeviceClassName, DeviceClass]
) -> str | None:
    for claim in claims:
        if claim.allocation is not None:
            continue
        for request in claim.spec.requests:
            for name, wanted in [(request.name, request.device_class_name)] + [
                (f"{request.name}/{s.name}", s.device_class_name) for s in request.first_available
            ]:
                if wanted and wanted not in classes:
                    return f"request {name}: device class {wanted} does not exist"
    return None


def _needs_per_node_check(placement: Placement) -> bool:
    """Does the answer differ between nodes of one class (their names, hostname labels)?"""
    if HOSTNAME in placement.node_selector or names_nodes(placement):
        return True
    return any(
        t.fields or any(r.key == HOSTNAME for r in t.expressions)
        for t in placement.required_terms or ()
    )


def _passing(
    index: ClusterIndex,
    key: ClassKey,
    placement: Placement,
    pinned: set[NodeName],
    reasons: Counter[str],
    *,
    per_node: bool,
    check: TopologyCheck,
) -> tuple[list[NodeState], int]:
    """The nodes of a class that pass the filters: all of them (one stands for the rest) when
    the filters cannot tell them apart, else each checked."""
    if not per_node:
        representative = index.representative(key)
        members = len(index.classes[key].members)
        refused = _refusals(representative, placement, check)
        reasons.update(dict.fromkeys(refused, members))
        return ([], 0) if refused else ([representative], members)
    passing = []
    for state in index.members(key):
        refused = _refusals(state, placement, check)
        # Filter (kubernetes v1.34.3, plugins/dynamicresources/dynamicresources.go) checks
        # every allocated claim's node selector: the node must match them all.
        if not refused and pinned and pinned != {state.node.name}:
            refused = ("resourceclaim not available on the node",)
        reasons.update(refused)
        if not refused:
            passing.append(state)
    return passing, len(passing)


def _refusals(state: NodeState, placement: Placement, check: TopologyCheck) -> tuple[str, ...]:
    """Why the filters before DRA's refuse the node, in the scheduler's words: the first plugin
    that refuses it gives all its reasons (NodeResourcesFit may give several)."""
    why = filter_reason(state.node, placement)
    if why is not None:
        return (why,)
    short = insufficient(placement.requests, state.node.allocatable, state.usage)
    if short:
        return short
    why = check.refusal(state.node)
    return () if why is None else (why,)
