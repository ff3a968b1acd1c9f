"""One pod's scheduling cycle as PodTopologySpread and InterPodAffinity see it: their PreFilter
state over every node and the pods bound so far (index.py's BoundPods), then per node their
Filter (spread first, as the default profile orders them) and, over the nodes that passed every
filter, their scores (domain/scheduling/topology_spread.py, pod_affinity.py).

Where neither plugin can tell nodes apart (the pod has no terms and no bound pod has any) the
check is NO_CHECK and the node classes of index.py stand as they are; otherwise nodes of one
class may differ by the pods bound on them and in their domains, and each is judged on its own.
"""

from collections import Counter
from collections.abc import Sequence

import attrs

from npu_dra.domain.scheduling.index import ClusterIndex
from npu_dra.domain.scheduling.placement import Placement, SchedNode
from npu_dra.domain.scheduling.pod_affinity import (
    AffinityCounts,
    Pair,
    affinity_counts,
    affinity_refusal,
    affinity_score,
    topology_scores,
)
from npu_dra.domain.scheduling.pod_terms import NO_TERMS, Namespaces
from npu_dra.domain.scheduling.topology_spread import (
    SpreadCounts,
    SpreadNode,
    spread_counts,
    spread_refusal,
    spread_scores,
)


@attrs.frozen
class TopologyCheck:
    placement: Placement
    affinity: AffinityCounts
    spread: SpreadCounts
    weights: Counter[Pair]  # InterPodAffinity's topologyScore
    nodes: dict[str, SpreadNode]  # every node with its pods; empty without spread constraints
    namespaces: Namespaces = attrs.field(factory=Namespaces)

    @property
    def filters(self) -> bool:
        """Can the filters refuse one node of a class and pass another?"""
        return self.affinity.filters or self.spread.filters

    @property
    def scores(self) -> bool:
        """Can the scores differ between nodes of one class?"""
        return any(self.weights.values()) or any(not c.hard for c in self.placement.pod.spread)

    def refusal(self, node: SchedNode) -> str | None:
        if self.spread.filters:
            why = spread_refusal(self.spread, node)
            if why is not None:
                return why
        if self.affinity.filters:
            return affinity_refusal(self.affinity, node.labels, self.namespaces)
        return None

    def node_scores(self, feasible: Sequence[SchedNode]) -> list[tuple[int, int | None]]:
        """(InterPodAffinity's, PodTopologySpread's) raw score per feasible node, in order."""
        spread = spread_scores(
            self.placement,
            self.placement.pod,
            [self.nodes.get(n.name) or SpreadNode(n) for n in feasible],
            list(self.nodes.values()),
        )
        pods = [affinity_score(self.weights, n.labels) for n in feasible]
        return list(zip(pods, spread, strict=True))


NO_CHECK = TopologyCheck(
    Placement(),
    AffinityCounts(NO_TERMS, Counter(), Counter(), Counter()),
    SpreadCounts(NO_TERMS, (), ()),
    Counter(),
    {},
)


def topology_check(index: ClusterIndex, placement: Placement) -> TopologyCheck:
    pod, bound = placement.pod, index.pods
    if not pod.has_affinity and not pod.spread and not bound.with_terms:
        return NO_CHECK
    others = bound.everywhere() if pod.has_affinity else bound.with_terms
    labelled = [(index.nodes[node].node.labels, p) for node, p in others if node in index.nodes]
    affinity = affinity_counts(pod, labelled, bound.namespaces)
    weights = topology_scores(pod, labelled, bound.namespaces)
    nodes = {}
    if pod.spread:
        nodes = {
            name: SpreadNode(state.node, bound.by_node.get(name, ()))
            for name, state in index.nodes.items()
        }
    spread = spread_counts(placement, pod, list(nodes.values()))
    return TopologyCheck(placement, affinity, spread, weights, nodes, bound.namespaces)
