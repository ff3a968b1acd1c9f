"""Which of the nodes that fit a pod the scheduler takes: the highest total score
(domain/scheduling/scoring.py), ties broken at random (kubernetes v1.34.3 pkg/scheduler/
schedule_one.go `selectHost`; v1.36.3's `nodeScoreHeap` orders ties by a random key). Simulate
takes the least-loaded of the tied nodes, then the first by name, and reports how many tied: the
node is certain only when that is one.

Nodes of one class score alike, so a class is scored once, unless the pod's preferred node
affinity names nodes (hostname, metadata.name) or InterPodAffinity or PodTopologySpread score
the pod (pod_topology.py; the pods bound on a node and in its domains tell it from the others
of its class): then each node is. With 100 nodes or more the
scheduler stops filtering once it has found `numFeasibleNodesToFind` (schedule_one.go: 50% less
a point per 125 nodes, at least 5% and 100 nodes) from a start that rotates between pods, and
scores only those: where more fit, any node that fits may be chosen, and all are reported.

InterPodAffinity (weight 2) scores the pod's preferred (anti-)affinity terms against the pods
bound, and those pods' required affinity (hardPodAffinityWeight 1) and preferred terms against
the pod; PodTopologySpread (weight 2) scores the pod's ScheduleAnyway constraints
(domain/scheduling/pod_affinity.py, topology_spread.py). The system default spread constraints
need a Service, ReplicationController, ReplicaSet or StatefulSet selecting the pod
(helper.DefaultSelector): scenario pods have none, and simulate reads none from a snapshot, so
for it they never apply (in the cluster a snapshot's pods that such objects select are also
spread by hostname and zone). ImageLocality reads `status.images`, which simulated nodes do not
list (a snapshot's nodes may: not modelled), so it is left out.
"""

from collections.abc import Iterator, Sequence

import attrs

from npu_dra.domain.claims import Allocation, ResourceClaim
from npu_dra.domain.scheduling.index import HOSTNAME, NodeState
from npu_dra.domain.scheduling.placement import Placement
from npu_dra.domain.scheduling.pod_topology import NO_CHECK, TopologyCheck
from npu_dra.domain.scheduling.scoring import ScoredNode, ScoringRules, dra_score, totals

MIN_FEASIBLE, MIN_FEASIBLE_PERCENT = 100, 5  # schedule_one.go minFeasibleNodes*


@attrs.frozen
class Fit:
    """Nodes of one class that pass every filter, with what DRA allocates on `representative`."""

    representative: NodeState
    found: tuple[Allocation, ...]
    nodes: tuple[NodeState, ...]  # each passing node, or one standing for the whole class
    count: int  # how many nodes it stands for


@attrs.frozen
class Choice:
    fit: Fit
    node: NodeState
    shown: int  # how many nodes the scheduler may equally take


def choose(
    fits: Sequence[Fit],
    placement: Placement,
    claims: Sequence[ResourceClaim],
    *,
    rules: ScoringRules,
    cluster_size: int,
    check: TopologyCheck = NO_CHECK,
) -> Choice:
    groups = list(_groups(fits, each=names_nodes(placement) or check.scores))
    scored = [ScoredNode(n.node, n.usage, dra_score(claims, f.found)) for f, n, _ in groups]
    if check.scores:
        pods = check.node_scores([c.node for c in scored])
        scored = [attrs.evolve(c, pods=p, spread=t) for c, (p, t) in zip(scored, pods, strict=True)]
    scores = totals(placement, scored, rules)
    top = max(scores)
    tied = [g for g, score in zip(groups, scores, strict=True) if score == top]
    fit, node, _ = min(tied, key=lambda g: (g[1].load, g[1].node.name))
    feasible = sum(count for _, _, count in groups)
    if feasible > feasible_to_find(cluster_size):
        return Choice(fit, node, feasible)
    return Choice(fit, node, sum(count for _, _, count in tied))


def feasible_to_find(cluster_size: int) -> int:
    """numFeasibleNodesToFind with the default percentageOfNodesToScore (0: adaptive)."""
    if cluster_size < MIN_FEASIBLE:
        return cluster_size
    percent = max(50 - cluster_size // 125, MIN_FEASIBLE_PERCENT)
    return max(cluster_size * percent // 100, MIN_FEASIBLE)


def names_nodes(placement: Placement) -> bool:
    """Does a preferred node-affinity term tell nodes of one class apart?"""
    return any(
        p.term.fields or any(r.key == HOSTNAME for r in p.term.expressions)
        for p in placement.preferred
    )


def _groups(fits: Sequence[Fit], *, each: bool) -> Iterator[tuple[Fit, NodeState, int]]:
    """(fit, the node it offers, how many nodes score as that one does); `each`: every node
    scores on its own."""
    for fit in fits:
        if each:
            yield from ((fit, node, 1) for node in fit.nodes)
        else:
            yield fit, min(fit.nodes, key=lambda n: (n.load, n.node.name)), fit.count
