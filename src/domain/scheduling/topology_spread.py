"""PodTopologySpread, as kube-scheduler's default profile runs it for a pod with its own
topologySpreadConstraints (kubernetes v1.34.3 pkg/scheduler/framework/plugins/podtopologyspread/,
v1.36.3 alike). The system default constraints (plugin.go `systemDefaultConstraints`, hostname
skew 3 and zone skew 5, ScheduleAnyway) score only a pod that a Service, ReplicationController,
ReplicaSet or StatefulSet selects (common.go `buildDefaultConstraints`, helper.DefaultSelector):
simulate holds none of those objects, so for it they never apply.

Pods are counted per node in the incoming pod's namespace, where the constraint's selector
matches them (an empty selector counts none: common.go `countPodsMatchSelector`), on the nodes
that have every constraint's topology key and pass its inclusion policies (nodeAffinityPolicy
Honor: the pod's nodeSelector and required node affinity; nodeTaintsPolicy Honor: its
NoSchedule/NoExecute taints tolerated).

Filter (filtering.go), DoNotSchedule constraints: the node must have the key ("... (missing
required label)"), and its domain's count, plus one where the selector matches the pod itself,
less the smallest domain's count (0 while fewer domains than minDomains) may not pass maxSkew.
Score (scoring.go), ScheduleAnyway constraints, over the nodes that passed every filter: per
constraint `count * log(domains + 2) + maxSkew - 1`, hostname counting the node's own pods and
its domains the feasible nodes; rounded, then `100 * (max + min - score) / max` (100 when the
highest is 0); a feasible node without every key scores 0. Weight 2.
"""

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import attrs

from npu_dra.domain.scheduling.placement import (
    Placement,
    SchedNode,
    matches_node_affinity,
    untolerated_taint,
)
from npu_dra.domain.scheduling.pod_terms import PodTerms, SpreadConstraint

NOT_MATCHED = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = NOT_MATCHED + " (missing required label)"
HOSTNAME = "kubernetes.io/hostname"
MAX_SCORE = 100


@attrs.frozen
class SpreadNode:
    """One node as the plugin reads it: its labels, taints and the pods bound there."""

    node: SchedNode
    pods: Sequence[PodTerms] = ()


def _counted(
    constraint: SpreadConstraint, placement: Placement, pod: PodTerms, spread: SpreadNode
) -> int | None:
    """The pods of `spread` the constraint counts, None if its inclusion policies leave the node
    out."""
    node = spread.node
    if constraint.honor_affinity and not matches_node_affinity(node, placement):
        return None
    if constraint.honor_taints and untolerated_taint(node, placement) is not None:
        return None
    return _matching(constraint, pod, spread.pods)


def _matching(constraint: SpreadConstraint, pod: PodTerms, pods: Sequence[PodTerms]) -> int:
    selector = constraint.selector
    if selector is None or selector.empty:
        return 0
    return sum(1 for p in pods if p.namespace == pod.namespace and selector.matches(p.labels))


def _has_keys(labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


@attrs.frozen
class SpreadCounts:
    """PreFilter's state: per DoNotSchedule constraint, the matching pods per domain."""

    pod: PodTerms
    constraints: tuple[SpreadConstraint, ...]
    domains: tuple[Counter[str], ...]

    @property
    def filters(self) -> bool:
        return bool(self.constraints)


def spread_counts(placement: Placement, pod: PodTerms, nodes: Sequence[SpreadNode]) -> SpreadCounts:
    hard = tuple(c for c in pod.spread if c.hard)
    domains: tuple[Counter[str], ...] = tuple(Counter() for _ in hard)
    for spread in nodes:
        labels = spread.node.labels
        if not hard or not _has_keys(labels, hard):
            continue
        for constraint, found in zip(hard, domains, strict=True):
            count = _counted(constraint, placement, pod, spread)
            if count is not None:
                found[labels[constraint.topology_key]] += count
    return SpreadCounts(pod, hard, domains)


def spread_refusal(counts: SpreadCounts, node: SchedNode) -> str | None:
    """Why PodTopologySpread's Filter refuses the node, None if it passes."""
    for constraint, found in zip(counts.constraints, counts.domains, strict=True):
        value = node.labels.get(constraint.topology_key)
        if value is None:
            return MISSING_LABEL
        smallest = min(found.values()) if len(found) >= constraint.min_domains else 0
        selector = constraint.selector
        own = 1 if selector is not None and selector.matches(counts.pod.labels) else 0
        if found[value] + own - smallest > constraint.max_skew:
            return NOT_MATCHED
    return None


def spread_scores(
    placement: Placement, pod: PodTerms, feasible: Sequence[SpreadNode], nodes: Sequence[SpreadNode]
) -> list[int | None]:
    """Score per feasible node, in order: None for a node without every key (normalized to 0),
    all None when the pod has no ScheduleAnyway constraint (the plugin skips it)."""
    soft = tuple(c for c in pod.spread if not c.hard)
    if not soft:
        return [None] * len(feasible)
    scored = [f for f in feasible if _has_keys(f.node.labels, soft)]
    counts = _domain_counts(placement, pod, soft, scored, nodes)
    # topologyNormalizingWeight; Python's log and Go's may differ in the last bit
    weights = [
        math.log((len(scored) if c.topology_key == HOSTNAME else len(found)) + 2)
        for c, found in zip(soft, counts, strict=True)
    ]
    found_scores: list[int | None] = []
    for spread in feasible:
        if not _has_keys(spread.node.labels, soft):
            found_scores.append(None)
            continue
        total = 0.0
        for c, found, weight in zip(soft, counts, weights, strict=True):
            value = spread.node.labels[c.topology_key]
            count = _matching(c, pod, spread.pods) if c.topology_key == HOSTNAME else found[value]
            total += count * weight + (c.max_skew - 1)
        found_scores.append(_go_round(total))
    return found_scores


def _domain_counts(
    placement: Placement,
    pod: PodTerms,
    soft: tuple[SpreadConstraint, ...],
    scored: Sequence[SpreadNode],
    nodes: Sequence[SpreadNode],
) -> list[Counter[str]]:
    """Per constraint, the matching pods of every node (with every key, passing the inclusion
    policies) in the domains the scored nodes have."""
    counts: list[Counter[str]] = [
        Counter(dict.fromkeys({s.node.labels[c.topology_key] for s in scored}, 0)) for c in soft
    ]
    for spread in nodes:
        labels = spread.node.labels
        if not _has_keys(labels, soft):
            continue
        for c, found in zip(soft, counts, strict=True):
            if c.topology_key == HOSTNAME or labels[c.topology_key] not in found:
                continue
            count = _counted(c, placement, pod, spread)
            if count is not None:
                found[labels[c.topology_key]] += count
    return counts


def _go_round(value: float) -> int:
    """Go's math.Round of a score (never negative): halves up, where Python's round() goes to
    even. `value - floor` is exact in binary floating point."""
    whole = math.floor(value)
    return whole + (1 if value - whole >= 0.5 else 0)


def normalized_spread(scores: Sequence[int | None]) -> list[int]:
    """NormalizeScore: None (no score, or a node without every key) is 0."""
    present = [s for s in scores if s is not None]
    if not present:
        return [0] * len(scores)
    low, high = min(present), max(present)
    if high == 0:
        return [0 if s is None else MAX_SCORE for s in scores]
    return [0 if s is None else MAX_SCORE * (high + low - s) // high for s in scores]
