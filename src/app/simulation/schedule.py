"""One pod's scheduling cycle, as kube-scheduler v1.34's default profile runs it: the node
filters (taints, node selector and affinity) first, then DRA's Filter, which allocates all of
the pod's unallocated claims together on each remaining node. An allocator error on any node
that reached DRA's Filter fails the whole cycle (the pod stays unschedulable with it).

Among the nodes that fit, the scheduler scores (with no resource requests the default
NodeResourcesFit scoring favours the node with the fewest pods) and breaks ties at random, so
a pod's node is certain only when one node fits: simulate takes the least-loaded node, then the
first by name, and reports how many fitted. On the chosen node the devices are certain only when
every order in which the scheduler may walk the node's pools and slices gives the same ones:
the other choices are reported with the decision.
"""

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial

import attrs

from npu_dra.app.simulation.index import HOSTNAME, ClassKey, ClusterIndex, NodeState
from npu_dra.domain.claims import Allocation, AllocationResult, DeviceClass, ResourceClaim
from npu_dra.domain.ids import DeviceClassName, NodeName
from npu_dra.domain.scheduling.allocator import (
    DEFAULT_STEP_BUDGET,
    AllocationError,
    SearchBudgetExceeded,
    allocate_claims,
)
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.placement import Placement, filter_reason
from npu_dra.domain.scheduling.pools import Pool, walk_orders
from npu_dra.domain.scheduling.rules import AllocatorRules

DEFAULT_RULES = AllocatorRules()

NO_FIT = "cannot allocate all claims"
UNDECIDED = "allocation search exceeded simulate's step budget"
KEPT_COUNTERS = "counters kept"  # counted in `reasons`, never one of the scheduler's reasons


@attrs.frozen
class Decision:
    node: str | None
    allocations: tuple[Allocation | None, ...] = ()
    status: str = "Bound"
    reason: str | None = None
    fitting: int = 0
    # other allocations (same shape as `allocations`) the scheduler may make on the same node
    # when it walks the node's pools and slices in another order
    other_choices: tuple[tuple[Allocation | None, ...], ...] = ()


Fit = tuple[int, str, NodeState, tuple[Allocation, ...]]  # load, node, representative, found
Attempt = Callable[..., tuple[Allocation, ...] | None]  # allocate_claims for one pod's claims


def schedule_pod(
    placement: Placement,
    claims: Sequence[ResourceClaim],
    *,
    index: ClusterIndex,
    classes: Mapping[DeviceClassName, DeviceClass],
    matcher: Matcher,
    budget: int = DEFAULT_STEP_BUDGET,
    rules: AllocatorRules = DEFAULT_RULES,
) -> Decision:
    missing = _missing_class(claims, classes)
    if missing:
        return Decision(None, status="Pending", reason=missing)
    pending = [c for c in claims if c.allocation is None]
    pinned = {c.allocation.node_name for c in claims if c.allocation and c.allocation.node_name}
    attempt = partial(
        allocate_claims,
        pending,
        classes=classes,
        allocated=index.allocated,
        matcher=matcher,
        budget=budget,
        rules=rules,
    )
    reasons: Counter[str] = Counter()
    try:
        fitting = _fitting(index, placement, attempt, reasons, pinned=pinned)
    except AllocationError as error:
        return Decision(None, status="Error", reason=str(error))
    if not fitting:
        return _noted(_unschedulable(index, reasons), pending, rules)
    best = min(fitting, key=lambda f: (f[0], f[1]))
    return _noted(_decided(claims, index, attempt, best, reasons), pending, rules)


def _noted(decision: Decision, claims: Sequence[ResourceClaim], rules: AllocatorRules) -> Decision:
    """distinctAttribute, where a claim has one, as v1.34.3 takes it (scheduling/constraints.py)."""
    names = {c.distinct_attribute for claim in claims for c in claim.spec.constraints}
    names.discard(None)
    if not names or rules.distinct_values:
        return decision
    note = (
        f"(distinctAttribute {', '.join(sorted(filter(None, names)))}: decided as kube-scheduler "
        "v1.34.3 does with DRAConsumableCapacity off: ignored beside matchAttribute, otherwise "
        "each device must have the attribute but values may repeat)"
    )
    return attrs.evolve(decision, reason=" ".join(filter(None, [decision.reason, note])))


def _fitting(
    index: ClusterIndex,
    placement: Placement,
    attempt: Attempt,
    reasons: Counter[str],
    *,
    pinned: set[NodeName],
) -> list[Fit]:
    """Per node class, least loaded first: the nodes that pass the filters and DRA's Filter,
    with `reasons` counting every node by why it fits or not. AllocationError fails the pod."""
    per_node = _needs_per_node_check(placement) or bool(pinned)
    fitting: list[Fit] = []
    for key in sorted(index.classes, key=index.least_loaded):
        passing, count = _passing(index, key, placement, pinned, reasons, per_node=per_node)
        if not count:
            continue
        representative = passing[0] if per_node else index.representative(key)
        noted: set[NodeName] = set()
        try:
            found = attempt(
                node=NodeName(representative.node.name),
                pools=representative.pools,
                counter_notes=noted,
            )
        except SearchBudgetExceeded:
            reasons[UNDECIDED] += count
            continue
        reasons[KEPT_COUNTERS] += count if noted else 0
        if found is None:
            reasons[NO_FIT] += count
            continue
        best = min(passing, key=lambda s: (s.load, s.node.name)) if per_node else representative
        fitting.append((best.load, best.node.name, representative, found))
        reasons["fit"] += count
    return fitting


def _unschedulable(index: ClusterIndex, reasons: Counter[str]) -> Decision:
    """No node fits: the scheduler's "0/N nodes are available: ..." as FitError.Error() words it
    (kube-scheduler v1.34.3, framework/types.go): "<count> <reason>" strings sorted as strings
    (so "1 node(s)..." comes before "15 cannot..."), joined by ", ", ending in a period."""
    total = len(index.nodes)
    shown = (f"{n} {why}" for why, n in reasons.items() if n and why != KEPT_COUNTERS)
    text = f"0/{total} nodes are available: {', '.join(sorted(shown))}."
    status = "Undecided" if reasons[UNDECIDED] else "Pending"
    return Decision(None, status=status, reason=" ".join(filter(None, [text, _kept(reasons)])))


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
    claims: Sequence[ResourceClaim],
    index: ClusterIndex,
    attempt: Attempt,
    fit: Fit,
    reasons: Counter[str],
) -> Decision:
    """The pod on the chosen node, with the other devices the scheduler may pick there."""
    _, name, representative, found = fit
    target = index.nodes[name]
    on_node = partial(attempt, node=NodeName(representative.node.name))
    others = _other_choices(on_node, representative.pools, found)
    undecided = f"{reasons[UNDECIDED]} node(s) undecided: {UNDECIDED}" if reasons[UNDECIDED] else ""
    note = "; ".join(filter(None, [undecided, _kept(reasons)])) or None
    return Decision(
        name,
        _placed(claims, found, representative, target),
        reason=note,
        fitting=reasons["fit"],
        other_choices=tuple(_placed(claims, o, representative, target) for o in others),
    )


def _placed(
    claims: Sequence[ResourceClaim],
    found: tuple[Allocation, ...],
    representative: NodeState,
    target: NodeState,
) -> tuple[Allocation | None, ...]:
    """One entry per claim: its new allocation on the target node, None if it had one."""
    moved = iter(_moved(a, representative, target) for a in found)
    return tuple(next(moved) if c.allocation is None else None for c in claims)


def _other_choices(
    allocate: Attempt,
    pools: tuple[Pool, ...],
    found: tuple[Allocation, ...],
) -> list[tuple[Allocation, ...]]:
    """The distinct allocations `allocate` (on one node) gives when the node's pools and slices
    are walked in the other orders (none when it has one slice, the common case)."""
    seen = {_devices(found)}
    others = []
    for order in walk_orders(pools):
        try:
            other = allocate(pools=order)
        except (AllocationError, SearchBudgetExceeded):
            continue
        if other is not None and _devices(other) not in seen:
            seen.add(_devices(other))
            others.append(other)
    return others


def _devices(found: tuple[Allocation, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(sorted(r.device for r in a.results)) for a in found)


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
    if HOSTNAME in placement.node_selector:
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
) -> tuple[list[NodeState], int]:
    """The nodes of a class that pass the filters: all of them (one stands for the rest) when
    the filters cannot tell them apart, else each checked."""
    if not per_node:
        representative = index.representative(key)
        why = filter_reason(representative.node, placement)
        members = len(index.classes[key].members)
        if why is None:
            return [representative], members
        reasons[why] += members
        return [], 0
    passing = []
    for state in index.members(key):
        why = filter_reason(state.node, placement)
        # Filter (kubernetes v1.34.3, plugins/dynamicresources/dynamicresources.go) checks
        # every allocated claim's node selector: the node must match them all.
        if why is None and pinned and pinned != {state.node.name}:
            why = "resourceclaim not available on the node"
        if why is None:
            passing.append(state)
        else:
            reasons[why] += 1
    return passing, len(passing)


def _moved(allocation: Allocation, source: NodeState, target: NodeState) -> Allocation:
    """The same devices, by position, on an equivalent node."""
    if source is target:
        return allocation
    results = []
    for r in allocation.results:
        c = target.devices[source.position[(r.driver, r.pool, r.device)]]
        results.append(AllocationResult(r.request, c.driver, c.pool, c.device.name, r.admin_access))
    return Allocation(tuple(results), NodeName(target.node.name))
