"""PodTopologySpread's Filter and Score (domain/scheduling/topology_spread.py), worked as
kubernetes v1.34.3 plugins/podtopologyspread/ works them: zones a (a1, a2) and b (b1, b2)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from npu_dra.domain.scheduling.placement import Placement, SchedNode, Taint
from npu_dra.domain.scheduling.pod_terms import (
    LabelSelector,
    PodTerms,
    SelectorRequirement,
    SpreadConstraint,
)
from npu_dra.domain.scheduling.topology_spread import (
    MISSING_LABEL,
    NOT_MATCHED,
    SpreadNode,
    normalized_spread,
    spread_counts,
    spread_refusal,
    spread_scores,
)

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
WEB = LabelSelector((SelectorRequirement("app", "In", frozenset({"web"})),))


def web(namespace: str = "t") -> PodTerms:
    return PodTerms(namespace, {"app": "web"})


def nodes(pods: dict[str, int], *more: SchedNode) -> list[SpreadNode]:
    """a1, a2, b1, b2 with that many web pods each, then `more`."""
    found = [
        SpreadNode(SchedNode(n, {HOST: n, ZONE: n[0]}), tuple(web() for _ in range(pods.get(n, 0))))
        for n in ("a1", "a2", "b1", "b2")
    ]
    return found + [SpreadNode(n) for n in more]


def pod(*constraints: SpreadConstraint) -> PodTerms:
    return PodTerms("t", {"app": "web"}, spread=constraints)


def zone(skew: int = 1, *, hard: bool = True, **more: Any) -> SpreadConstraint:
    return SpreadConstraint(skew, ZONE, hard, WEB, **more)


ANYWHERE = Placement()


def refused(
    incoming: PodTerms, cluster: Sequence[SpreadNode], placement: Placement = ANYWHERE
) -> dict[str, str]:
    counts = spread_counts(placement, incoming, cluster)
    found = {s.node.name: spread_refusal(counts, s.node) for s in cluster}
    return {n: why for n, why in found.items() if why is not None}


def test_do_not_schedule_keeps_zones_within_max_skew() -> None:
    # zone a 1 pod, zone b 0: a second pod in zone a would make the skew 2
    assert refused(pod(zone()), nodes({"a1": 1})) == {"a1": NOT_MATCHED, "a2": NOT_MATCHED}
    assert refused(pod(zone(2)), nodes({"a1": 1})) == {}
    assert refused(pod(zone()), nodes({"a1": 1, "b2": 1})) == {}


def test_only_pods_of_its_namespace_matching_the_selector_count() -> None:
    cluster = nodes({})
    cluster[0] = SpreadNode(cluster[0].node, (web("other"), PodTerms("t", {"app": "db"})))
    assert refused(pod(zone()), cluster) == {}


def test_a_pod_its_own_selector_does_not_match_adds_nothing_to_the_skew() -> None:
    other = PodTerms("t", {"app": "db"}, spread=(zone(),))
    assert refused(other, nodes({"a1": 1})) == {}


def test_min_domains_beyond_the_domains_there_are_counts_the_emptiest_as_zero() -> None:
    cluster = nodes({"a1": 1, "b1": 1})
    assert refused(pod(zone()), cluster) == {}
    # 2 zones < minDomains 3: the smallest count is taken as 0, so 1 + 1 - 0 > 1 everywhere
    assert len(refused(pod(zone(min_domains=3)), cluster)) == 4
    assert refused(pod(zone(2, min_domains=3)), cluster) == {}


def test_a_node_without_the_topology_key_is_refused_and_not_counted() -> None:
    bare = SchedNode("x", {HOST: "x"})
    cluster = [*nodes({"a1": 1}), SpreadNode(bare, (web(), web()))]
    assert refused(pod(zone(2)), cluster) == {"x": MISSING_LABEL}


def test_node_inclusion_policies_leave_nodes_out_of_the_counts() -> None:
    cluster = nodes({"b1": 1})
    cluster[2] = SpreadNode(
        SchedNode("b1", {HOST: "b1", ZONE: "b", "pool": "x"}, (Taint("k", "NoSchedule"),)),
        (web(),),
    )
    only_x = Placement(node_selector={"pool": "x"})
    # nodeAffinityPolicy Honor (default): zone a's nodes do not match the pod's nodeSelector, so
    # zone b is the only domain and its count the smallest
    assert refused(pod(zone()), cluster, only_x) == {}
    ignore = pod(zone(honor_affinity=False))
    assert set(refused(ignore, cluster, only_x)) == {"b1", "b2"}
    # nodeTaintsPolicy Honor: the tainted b1 and its pod are not counted
    assert refused(pod(zone(honor_taints=True)), cluster) == {}
    assert set(refused(pod(zone()), cluster)) == {"b1", "b2"}


def scores(incoming: PodTerms, cluster: list[SpreadNode]) -> list[int | None]:
    return spread_scores(Placement(), incoming, cluster, cluster)


def test_schedule_anyway_scores_fewer_matching_pods_higher() -> None:
    soft = pod(zone(hard=False))
    raw = scores(soft, nodes({"a1": 2, "b2": 1}))
    # 2 zones: weight log(4); count * weight + maxSkew - 1, rounded
    assert [round(2 * math.log(4)), round(math.log(4))] == [3, 1]
    assert raw == [3, 3, 1, 1]
    assert normalized_spread(raw) == [33, 33, 100, 100]


def test_hostname_constraints_count_the_nodes_own_pods_over_the_feasible_nodes() -> None:
    by_host = SpreadConstraint(1, HOST, False, WEB)
    raw = scores(pod(by_host), nodes({"a1": 1, "a2": 3}))
    # 4 feasible nodes: weight log(6) = 1.79; a1 1.79 -> 2, a2 5.38 -> 5
    assert raw == [2, 5, 0, 0]
    assert normalized_spread(raw) == [60, 0, 100, 100]


def test_no_schedule_anyway_constraint_scores_nothing_and_a_node_without_keys_zero() -> None:
    assert scores(pod(zone()), nodes({"a1": 1})) == [None] * 4
    bare = SchedNode("x", {HOST: "x"})
    raw = scores(pod(zone(hard=False)), nodes({}, bare))
    assert raw == [0, 0, 0, 0, None]
    assert normalized_spread(raw) == [100, 100, 100, 100, 0]
