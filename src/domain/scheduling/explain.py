"""`simulate --explain`: why a pod stays pending, per node, in words a user acts on.

kube-scheduler says only "0/3 nodes are available: 3 cannot allocate all claims", alike for a
16-NPU claim on 8-NPU nodes, a ring constraint and a misspelt attribute. Here each node gets the
first reason it fails, checked in the scheduler's order: an untolerated taint (named), the node
selector or affinity, the pod's cpu, memory or pod count beyond what the node has free (with the
numbers), its topology spread constraints or inter-pod (anti-)affinity against the pods bound
(explain_topology.py), a claim allocated on another node, then per claim and request how many of
the node's devices match the class and the request's selectors, how many of those are free and
how many are needed (a CEL error is named with its expression and device; with consumable
capacity, how many have the capacity asked left: explain_capacity.py), then the pod's
requests together, each claim's matchAttribute constraint over the free devices, and shared
counters. Nodes with the same reason are grouped. The state is the one the pod was decided in:
later pods have not taken anything yet.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction

import attrs

from npu_dra.domain.claims import DeviceClass, ResourceClaim
from npu_dra.domain.ids import DeviceClassName
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.constraints import lookup_attribute
from npu_dra.domain.scheduling.counters import counter_book
from npu_dra.domain.scheduling.counting import Need, count, needs
from npu_dra.domain.scheduling.dra_filter import NO_NODES
from npu_dra.domain.scheduling.explain_topology import topology_reason
from npu_dra.domain.scheduling.index import ClusterIndex, NodeState
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.placement import (
    Placement,
    SchedNode,
    cordoned_out,
    filter_reason,
    untolerated_taint,
)
from npu_dra.domain.scheduling.pod_topology import TopologyCheck, topology_check
from npu_dra.domain.scheduling.pools import Candidate
from npu_dra.domain.scheduling.request_data import claim_label
from npu_dra.domain.scheduling.resources import TOO_MANY_PODS, insufficient

NO_COMBINATION = (
    "the free devices match every request, but no combination of them satisfies the claims "
    "together (constraints, shared counters or capacity)"
)


@attrs.frozen
class NodeReason:
    reason: str
    nodes: tuple[str, ...]


@attrs.frozen
class Outcome:
    """What the scheduler made of the pod: the nodes whose search ran out of its step budget
    (`budget`), and its reason, which stands where no node refuses the pod by itself, and for
    every node where the pod never reached them (`kept_out`: a claim missing, PreEnqueue)."""

    reason: str | None = None
    undecided: frozenset[str] = frozenset()
    budget: int = 0
    kept_out: bool = False
    device_taints: bool = False  # DRADeviceTaints: a request gets no device it does not tolerate


def explain(
    placement: Placement,
    claims: Sequence[ResourceClaim],
    *,
    index: ClusterIndex,
    classes: Mapping[DeviceClassName, DeviceClass],
    matcher: Matcher,
    outcome: Outcome = Outcome(),
) -> tuple[NodeReason, ...]:
    """Every node's first reason, nodes with the same reason together, most nodes first."""
    if outcome.kept_out:
        return (NodeReason(outcome.reason or "", tuple(sorted(index.nodes))),)
    if not index.nodes:
        return (NodeReason(NO_NODES, ()),)
    by_reason: dict[str, list[str]] = {}
    devices_reason: dict[object, str] = {}  # per node class: identical pools, identical answer
    check = topology_check(index, placement)
    pending = [c for c in claims if c.allocation is None]
    for key in index.classes:
        for state in index.members(key):
            reason = _node_reason(state, placement, claims, check)
            gave_up = state.node.name in outcome.undecided
            if reason is None and not pending:
                reason = outcome.reason or NO_COMBINATION
            elif reason is None:
                if (key, gave_up) not in devices_reason:
                    devices_reason[key, gave_up] = _devices_reason(
                        state,
                        claims,
                        index,
                        classes,
                        matcher,
                        gave_up=outcome if gave_up else None,
                        taints=outcome.device_taints,
                    )
                reason = devices_reason[key, gave_up]
            by_reason.setdefault(reason, []).append(state.node.name)
    found = (NodeReason(r, tuple(sorted(n))) for r, n in by_reason.items())
    return tuple(sorted(found, key=lambda r: (-len(r.nodes), r.reason)))


def _node_reason(
    state: NodeState, placement: Placement, claims: Sequence[ResourceClaim], check: TopologyCheck
) -> str | None:
    node = state.node
    short = _filtered_reason(node, placement) or _resources_reason(state, placement)
    if short is not None:
        return short
    refused = check.refusal(node)
    if refused is not None:
        return topology_reason(refused)
    for claim in claims:
        pinned = claim.allocation.node_name if claim.allocation else None
        if pinned and pinned != node.name:
            return f"claim {claim_label(claim)} is allocated on node {pinned}"
    return None


def _filtered_reason(node: SchedNode, placement: Placement) -> str | None:
    """The node filters before NodeResourcesFit, in the default profile's order:
    NodeUnschedulable, TaintToleration, NodeAffinity."""
    if cordoned_out(node, placement):
        return "the node is unschedulable (cordoned)"
    taint = untolerated_taint(node, placement)
    if taint is not None:
        shown = f"{taint.key}={taint.value}" if taint.value else taint.key
        return f"taint {shown}:{taint.effect} is not tolerated by the pod"
    if filter_reason(node, placement) is not None:
        return "the node's labels do not match the pod's nodeSelector or node affinity"
    return None


def _resources_reason(state: NodeState, placement: Placement) -> str | None:
    """NodeResourcesFit's refusal, with the numbers it compared."""
    allocatable, pod = state.node.allocatable, placement.requests
    refused = insufficient(pod, allocatable, state.usage)
    if not refused:
        return None
    parts = []
    if TOO_MANY_PODS in refused:
        parts.append(
            f"{state.usage.pods} pods run there, its allocatable allows {allocatable.pods}"
        )
    have, used = dict(allocatable.resources.named()), dict(state.usage.requested.named())
    # used.get: a node's pods may use what it no longer advertises
    for name, wanted in pod.requested.named():
        if f"Insufficient {name}" in refused:
            free = _amount(name, have.get(name, 0) - used.get(name, 0))
            total = _amount(name, have.get(name, 0))
            parts.append(f"the pod requests {_amount(name, wanted)} {name}, {free} of {total} free")
    return f"the node's resources: {'; '.join(parts)}"


def _amount(name: str, value: int) -> str:
    return str(Quantity(Fraction(value, 1000) if name == "cpu" else Fraction(value)))


def _devices_reason(
    state: NodeState,
    claims: Sequence[ResourceClaim],
    index: ClusterIndex,
    classes: Mapping[DeviceClassName, DeviceClass],
    matcher: Matcher,
    *,
    gave_up: Outcome | None,  # the search ran out of its budget on this node
    taints: bool,
) -> str:
    wanted: list[tuple[Need, list[Candidate]]] = []
    words = []
    book = counter_book(state.pools, index.allocated)
    for need in needs(claims):
        device_class = classes.get(need.device_class)
        if device_class is None:
            return f"{need.label}: DeviceClass {need.device_class} does not exist"
        counted = count(need, device_class, state, index, matcher=matcher, book=book, taints=taints)
        if counted.reason is not None:
            return counted.reason
        wanted.append((need, counted.free))
        words.append(counted.words)
    if gave_up is not None:
        return (
            f"the allocation search ran out of simulate's step budget (--search-budget "
            f"{gave_up.budget}) before it decided; counting leaves the node possible: "
            + "; ".join(words)
        )
    together = _together(wanted)
    if together is not None:
        return together
    return _constraint_reason(claims, wanted) or NO_COMBINATION


def _together(wanted: list[tuple[Need, list[Candidate]]]) -> str | None:
    """Requests that fit one by one may still ask more than their free devices together."""
    needed = sum(len(free) if need.all_mode else need.count for need, free in wanted)
    union = {c.key for need, free in wanted if not need.admin for c in free}
    shared = any(c.device.allow_multiple_allocations for _, free in wanted for c in free)
    if len(wanted) < 2 or len(union) >= needed or shared:
        return None
    return f"the pod's requests together need {needed} devices; {len(union)} free ones match them"


def _constraint_reason(
    claims: Sequence[ResourceClaim], wanted: list[tuple[Need, list[Candidate]]]
) -> str | None:
    """A claim's matchAttribute: no value is shared by enough free, matching devices."""
    for claim in claims:
        for constraint in claim.spec.constraints if claim.allocation is None else ():
            attribute = constraint.match_attribute
            if attribute is None:  # the scheduler errs on it: no pending pod has one
                continue
            scoped = [
                (need, free)
                for need, free in wanted
                if need.claim == claim_label(claim)
                and (not constraint.requests or need.request in constraint.requests)
            ]
            needed = sum(need.count for need, _ in scoped)
            values: Counter[str] = Counter()
            for candidate in {c.key: c for _, free in scoped for c in free}.values():
                found = lookup_attribute(candidate, attribute)
                values["(none)" if found is None else str(found[1])] += 1
            best = max((n for v, n in values.items() if v != "(none)"), default=0)
            if best < needed:
                shown = ", ".join(f"{v}: {n}" for v, n in sorted(values.items()))
                return (
                    f"claim {claim_label(claim)}: matchAttribute {attribute}: "
                    f"{needed} devices must share one value; free devices by value: {shown}"
                )
    return None
