"""InterPodAffinity's Filter and Score (domain/scheduling/pod_affinity.py), worked as
kubernetes v1.34.3 plugins/interpodaffinity/ works them: two zones, a and b, of two nodes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from npu_dra.domain.scheduling.pod_affinity import (
    AFFINITY_NOT_MATCHED,
    ANTI_AFFINITY_NOT_MATCHED,
    EXISTING_ANTI_AFFINITY,
    Bound,
    affinity_counts,
    affinity_refusal,
    affinity_score,
    topology_scores,
)
from npu_dra.domain.scheduling.pod_terms import (
    AffinityTerm,
    LabelSelector,
    Namespaces,
    PodTerms,
    SelectorRequirement,
    WeightedTerm,
)

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
NODES = {n: {HOST: n, ZONE: n[0]} for n in ("a1", "a2", "b1", "b2")}  # zones a and b
NONE = Namespaces()


def app(value: str) -> LabelSelector:
    return LabelSelector((SelectorRequirement("app", "In", frozenset({value})),))


def term(value: str, key: str = HOST, namespaces: tuple[str, ...] = ("t",)) -> AffinityTerm:
    return AffinityTerm(app(value), key, frozenset(namespaces))


def labelled(value: str, **terms: Any) -> PodTerms:
    return PodTerms("t", {"app": value}, **terms)


def on(node: str, pod: PodTerms) -> Bound:
    return NODES[node], pod


def refusals(pod: PodTerms, bound: list[Bound], namespaces: Namespaces = NONE) -> dict[str, str]:
    counts = affinity_counts(pod, bound, namespaces)
    found = {n: affinity_refusal(counts, labels, namespaces) for n, labels in NODES.items()}
    return {n: why for n, why in found.items() if why is not None}


def test_required_anti_affinity_by_hostname_refuses_only_the_matching_pods_node() -> None:
    pod = labelled("web", anti_affinity=(term("web"),))
    assert refusals(pod, [on("a1", labelled("web"))]) == {"a1": ANTI_AFFINITY_NOT_MATCHED}


def test_required_anti_affinity_by_zone_refuses_the_whole_zone() -> None:
    pod = labelled("web", anti_affinity=(term("web", ZONE),))
    refused = refusals(pod, [on("a1", labelled("web")), on("b1", labelled("db"))])
    assert refused == {"a1": ANTI_AFFINITY_NOT_MATCHED, "a2": ANTI_AFFINITY_NOT_MATCHED}


def test_terms_select_their_own_namespace_unless_they_name_others() -> None:
    elsewhere = PodTerms("other", {"app": "web"})
    pod = labelled("web", anti_affinity=(term("web", ZONE),))
    assert refusals(pod, [on("a1", elsewhere)]) == {}
    named = labelled("web", anti_affinity=(term("web", ZONE, ("other",)),))
    assert set(refusals(named, [on("a1", elsewhere)])) == {"a1", "a2"}


def test_a_namespace_selector_matches_the_namespace_labels() -> None:
    namespaces = Namespaces({"other": {"team": "x"}})
    team = LabelSelector((SelectorRequirement("team", "In", frozenset({"x"})),))
    any_team = AffinityTerm(app("web"), HOST, frozenset(), team)
    pod = labelled("web", anti_affinity=(any_team,))
    assert refusals(pod, [on("b2", PodTerms("other", {"app": "web"}))], namespaces) == {
        "b2": ANTI_AFFINITY_NOT_MATCHED
    }
    assert refusals(pod, [on("b2", PodTerms("third", {"app": "web"}))], namespaces) == {}


def test_required_affinity_needs_a_matching_pod_in_the_nodes_domain() -> None:
    pod = labelled("cache", affinity=(term("web", ZONE),))
    refused = refusals(pod, [on("b2", labelled("web"))])
    assert refused == {"a1": AFFINITY_NOT_MATCHED, "a2": AFFINITY_NOT_MATCHED}


def test_the_first_pod_of_a_group_matching_its_own_terms_goes_anywhere() -> None:
    pod = labelled("web", affinity=(term("web", ZONE),))
    assert refusals(pod, []) == {}
    # ... but not once one such pod runs somewhere
    assert set(refusals(pod, [on("a1", labelled("web"))])) == {"b1", "b2"}
    # a pod that does not match its own terms waits for one that does
    cache = labelled("cache", affinity=(term("web", ZONE),))
    assert len(refusals(cache, [])) == 4


def test_required_affinity_counts_pods_matching_all_its_terms() -> None:
    both = labelled("web", affinity=(term("web", ZONE), term("web", HOST)))
    refused = refusals(both, [on("a1", labelled("web"))])
    assert set(refusals(both, [])) == set()
    assert refused == {n: AFFINITY_NOT_MATCHED for n in ("a2", "b1", "b2")}


def test_a_bound_pods_anti_affinity_refuses_the_incoming_pod() -> None:
    loner = labelled("loner", anti_affinity=(term("noisy", ZONE),))
    refused = refusals(labelled("noisy"), [on("b1", loner)])
    assert refused == {"b1": EXISTING_ANTI_AFFINITY, "b2": EXISTING_ANTI_AFFINITY}
    assert refusals(labelled("quiet"), [on("b1", loner)]) == {}


def test_the_incoming_pods_own_rules_are_checked_first() -> None:
    pod = labelled("web", affinity=(term("db", ZONE),), anti_affinity=(term("web"),))
    bound = [on("a1", labelled("web")), on("a2", labelled("db"))]
    assert refusals(pod, bound) == {
        "a1": ANTI_AFFINITY_NOT_MATCHED,
        "b1": AFFINITY_NOT_MATCHED,
        "b2": AFFINITY_NOT_MATCHED,
    }


def scores(pod: PodTerms, bound: list[Bound]) -> Mapping[str, int]:
    weights = topology_scores(pod, bound, NONE)
    return {n: affinity_score(weights, labels) for n, labels in NODES.items()}


def test_preferred_terms_weigh_the_domains_where_matching_pods_run() -> None:
    pod = labelled(
        "cache",
        preferred_affinity=(WeightedTerm(80, term("web", ZONE)),),
        preferred_anti_affinity=(WeightedTerm(30, term("cache")),),
    )
    bound = [on("a1", labelled("web")), on("a2", labelled("web")), on("a2", labelled("cache"))]
    # zone a: two web pods, 80 each; a2 less 30 for the cache pod there
    assert scores(pod, bound) == {"a1": 160, "a2": 130, "b1": 0, "b2": 0}


def test_bound_pods_terms_weigh_for_the_incoming_pod() -> None:
    # their required affinity at hardPodAffinityWeight 1, their preferences at their weights
    fan = labelled("fan", affinity=(term("web", ZONE),))
    shy = labelled("shy", preferred_anti_affinity=(WeightedTerm(5, term("web")),))
    assert scores(labelled("web"), [on("a1", fan), on("b2", shy)]) == {
        "a1": 1,
        "a2": 1,
        "b1": 0,
        "b2": -5,
    }
