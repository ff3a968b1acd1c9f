"""What one pod says about other pods: its namespace and labels, its inter-pod (anti-)affinity
terms and its topology spread constraints, as kube-scheduler holds them once the API server has
admitted the pod (kubernetes v1.34.3 pkg/scheduler/framework/types.go `newAffinityTerm`,
plugins/podtopologyspread/common.go `filterTopologySpreadConstraints`; v1.36.3 alike).

A label selector is metav1.LabelSelector as apimachinery's labels.Selector evaluates it: every
requirement must hold (matchLabels are `In` requirements); an empty selector (`{}`) matches every
pod; a nil one (None here) matches none. matchLabelKeys and mismatchLabelKeys are already
merged into the selector, as the API server does on create (pkg/registry/core/pod/strategy.go).
"""

from collections.abc import Mapping

import attrs

NAMESPACE_NAME = "kubernetes.io/metadata.name"  # the label every namespace carries


@attrs.frozen
class SelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return labels.get(self.key) in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        return (self.key in labels) == (self.operator == "Exists")


@attrs.frozen
class LabelSelector:
    requirements: tuple[SelectorRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)


@attrs.frozen
class Namespaces:
    """The labels of the cluster's namespaces; one not listed has only its name label."""

    labels: Mapping[str, Mapping[str, str]] = attrs.field(factory=dict)

    def of(self, name: str) -> Mapping[str, str]:
        return {NAMESPACE_NAME: name, **self.labels.get(name, {})}


@attrs.frozen
class AffinityTerm:
    """A PodAffinityTerm: pods matching `selector` in one of `namespaces` (the owner's own where
    the term names none and has no namespaceSelector) or in a namespace `namespace_selector`
    matches, counted per value of the `topology_key` label of the nodes they run on."""

    selector: LabelSelector | None
    topology_key: str
    namespaces: frozenset[str] = frozenset()
    namespace_selector: LabelSelector | None = None

    def matches(self, pod: "PodTerms", namespaces: Namespaces) -> bool:
        """fwk.AffinityTerm.Matches: a namespaceSelector matched against the namespace's
        labels is what the scheduler's merge of the selected namespaces amounts to."""
        if self.selector is None or not self.selector.matches(pod.labels):
            return False
        if pod.namespace in self.namespaces:
            return True
        selector = self.namespace_selector
        return selector is not None and selector.matches(namespaces.of(pod.namespace))


@attrs.frozen
class WeightedTerm:
    weight: int
    term: AffinityTerm


@attrs.frozen
class SpreadConstraint:
    """A topologySpreadConstraint with the scheduler's defaults: minDomains 1,
    nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore."""

    max_skew: int
    topology_key: str
    hard: bool  # whenUnsatisfiable: DoNotSchedule (filters); ScheduleAnyway only scores
    selector: LabelSelector | None
    min_domains: int = 1
    honor_affinity: bool = True
    honor_taints: bool = False


@attrs.frozen
class PodTerms:
    namespace: str = "default"
    labels: Mapping[str, str] = attrs.field(factory=dict)
    affinity: tuple[AffinityTerm, ...] = ()  # required
    anti_affinity: tuple[AffinityTerm, ...] = ()  # required
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    spread: tuple[SpreadConstraint, ...] = ()

    @property
    def has_affinity(self) -> bool:
        """Any inter-pod term: a bound pod with one counts in others' filters or scores."""
        return bool(
            self.affinity
            or self.anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )


NO_TERMS = PodTerms()
