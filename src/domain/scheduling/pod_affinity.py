"""InterPodAffinity, as kube-scheduler's default profile runs it (kubernetes v1.34.3
pkg/scheduler/framework/plugins/interpodaffinity/, v1.36.3 alike): pure functions of the incoming
pod's terms and the pods already bound, each with its node's labels.

Filter (filtering.go), in this order, each the scheduler's words:
- the pod's required affinity: the node must have every term's topology key, and in its domain
  a pod must match every term (counted per (key, value) for pods matching *all* terms); unless no
  pod anywhere matches them all and the pod matches its own terms (the first pod of a group);
- the pod's required anti-affinity: no pod matching a term in the node's domain for that key;
- the bound pods' required anti-affinity: none of their terms that match the incoming pod may
  count a (key, value) the node has.
Score (scoring.go): per (topology key, value), the weights of the pod's preferred terms the bound
pods there match (anti-affinity negative), `hardPodAffinityWeight` (1, apis/config/v1/
defaults.go) per bound pod's required affinity term the pod matches and the weights of the bound
pods' preferred terms it matches; a node sums the values of its labels; normalized min to max
(NormalizeScore), weight 2 (apis/config/v1/default_plugins.go).
"""

from collections import Counter
from collections.abc import Iterable, Mapping

import attrs

from npu_dra.domain.scheduling.pod_terms import AffinityTerm, Namespaces, PodTerms, WeightedTerm

AFFINITY_NOT_MATCHED = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_NOT_MATCHED = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
HARD_POD_AFFINITY_WEIGHT = 1
Pair = tuple[str, str]  # (topology key, value)
Bound = tuple[Mapping[str, str], PodTerms]  # a bound pod with its node's labels


@attrs.frozen
class AffinityCounts:
    """PreFilter's state: per (topology key, value), how many bound pods count."""

    pod: PodTerms
    affinity: Counter[Pair]  # match all of the pod's required affinity terms
    anti_affinity: Counter[Pair]  # match one of the pod's required anti-affinity terms
    existing: Counter[Pair]  # have a required anti-affinity term the pod matches

    @property
    def filters(self) -> bool:
        return bool(self.pod.affinity or self.pod.anti_affinity or +self.existing)


def affinity_counts(
    pod: PodTerms, bound: Iterable[Bound], namespaces: Namespaces
) -> AffinityCounts:
    affinity: Counter[Pair] = Counter()
    anti: Counter[Pair] = Counter()
    existing: Counter[Pair] = Counter()
    for labels, other in bound:
        if pod.affinity and all(t.matches(other, namespaces) for t in pod.affinity):
            affinity.update(_pairs(pod.affinity, labels))
        anti.update(_pairs((t for t in pod.anti_affinity if t.matches(other, namespaces)), labels))
        theirs = (t for t in other.anti_affinity if t.matches(pod, namespaces))
        existing.update(_pairs(theirs, labels))
    return AffinityCounts(pod, affinity, anti, existing)


def _pairs(terms: Iterable[AffinityTerm], labels: Mapping[str, str]) -> Iterable[Pair]:
    return ((t.topology_key, labels[t.topology_key]) for t in terms if t.topology_key in labels)


def affinity_refusal(
    counts: AffinityCounts, labels: Mapping[str, str], namespaces: Namespaces
) -> str | None:
    """Why InterPodAffinity's Filter refuses a node with these labels, None if it passes."""
    if not _satisfies_affinity(counts, labels, namespaces):
        return AFFINITY_NOT_MATCHED
    for term in counts.pod.anti_affinity:
        if term.topology_key in labels and counts.anti_affinity[_pair(term, labels)] > 0:
            return ANTI_AFFINITY_NOT_MATCHED
    if any(counts.existing[pair] > 0 for pair in labels.items()):
        return EXISTING_ANTI_AFFINITY
    return None


def _pair(term: AffinityTerm, labels: Mapping[str, str]) -> Pair:
    return term.topology_key, labels[term.topology_key]


def _satisfies_affinity(
    counts: AffinityCounts, labels: Mapping[str, str], namespaces: Namespaces
) -> bool:
    terms = counts.pod.affinity
    if any(t.topology_key not in labels for t in terms):
        return False  # every topology label must exist on the node
    if all(counts.affinity[_pair(t, labels)] > 0 for t in terms):
        return True
    # the first pod of a group that matches its own terms may go anywhere
    return not +counts.affinity and all(t.matches(counts.pod, namespaces) for t in terms)


def topology_scores(pod: PodTerms, bound: Iterable[Bound], namespaces: Namespaces) -> Counter[Pair]:
    """PreScore's topologyScore: per (topology key, value), the summed weights."""
    scores: Counter[Pair] = Counter()
    for labels, other in bound:
        hard = tuple(WeightedTerm(HARD_POD_AFFINITY_WEIGHT, t) for t in other.affinity)
        sides = (
            (pod.preferred_affinity, other, 1),
            (pod.preferred_anti_affinity, other, -1),
            (hard, pod, 1),
            (other.preferred_affinity, pod, 1),
            (other.preferred_anti_affinity, pod, -1),
        )
        for terms, matched, sign in sides:
            for w in terms:
                if w.term.topology_key in labels and w.term.matches(matched, namespaces):
                    scores[_pair(w.term, labels)] += sign * w.weight
    return scores


def affinity_score(scores: Mapping[Pair, int], labels: Mapping[str, str]) -> int:
    """Score: the node's labels' values in topologyScore, summed."""
    return sum(scores.get(pair, 0) for pair in labels.items())
