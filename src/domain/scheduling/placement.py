"""The node filters that run before DRA's in kube-scheduler's default profile: TaintToleration
(NoSchedule/NoExecute taints must be tolerated) and NodeAffinity (`nodeSelector` labels, then
required node affinity: any term, each term all of its requirements). Pure functions of the
node and the pod, as in k8s.io/component-helpers/scheduling/corev1. NodeResourcesFit, which runs
next, is resources.py's; the preferences here are scored in scoring.py. What the pod says about
other pods (inter-pod affinity, topology spread: pod_terms.py) is judged against the pods already
bound, after NodeResourcesFit (topology_spread.py, pod_affinity.py).
"""

from collections.abc import Mapping

import attrs

from npu_dra.domain.scheduling.pod_terms import NO_TERMS, PodTerms
from npu_dra.domain.scheduling.resources import (
    DEFAULT_ALLOCATABLE,
    EMPTY_CONTAINER,
    NO_USAGE,
    Allocatable,
    PodRequests,
    Usage,
)

FILTERED_EFFECTS = ("NoSchedule", "NoExecute")
NO_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
# kube-scheduler v1.34.3, plugins/tainttoleration/taint_toleration.go: the taint is not named.
UNTOLERATED = "node(s) had untolerated taint(s)"
# kube-scheduler v1.34.3 (and v1.36.3), plugins/nodeunschedulable/node_unschedulable.go: a node
# with spec.unschedulable filters out a pod that does not tolerate this taint, before
# TaintToleration runs (the default profile's order), whatever taints the node carries.
UNSCHEDULABLE = "node(s) were unschedulable"


@attrs.frozen
class Taint:
    key: str
    effect: str
    value: str = ""

    def __str__(self) -> str:
        return f"{{{self.key}: {self.value}}}"


@attrs.frozen
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@attrs.frozen
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.operator == "In":
            return present and value in self.values
        if self.operator == "NotIn":
            return not present or value not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        return present and _compare(self.operator, value, self.values)


def _compare(operator: str, value: str, values: tuple[str, ...]) -> bool:
    try:
        have, want = int(value), int(values[0])
    except (ValueError, IndexError):
        return False
    return have > want if operator == "Gt" else have < want


@attrs.frozen
class Term:
    expressions: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()  # only metadata.name

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        if not self.expressions and not self.fields:
            return False  # an empty term matches no node
        return all(r.matches(labels) for r in self.expressions) and all(
            r.matches({"metadata.name": name}) for r in self.fields
        )


@attrs.frozen
class PreferredTerm:
    """preferredDuringSchedulingIgnoredDuringExecution: a term and the weight it scores."""

    weight: int
    term: Term


@attrs.frozen
class SchedNode:
    name: str
    labels: Mapping[str, str] = attrs.field(factory=dict)
    taints: tuple[Taint, ...] = ()
    allocatable: Allocatable = DEFAULT_ALLOCATABLE
    # what the pods a snapshot has bound here request; their count comes with each binding
    bound: Usage = NO_USAGE
    unschedulable: bool = False  # spec.unschedulable: cordoned


@attrs.frozen
class Placement:
    """What a pod asks of its node, before DRA."""

    node_selector: Mapping[str, str] = attrs.field(factory=dict)
    required_terms: tuple[Term, ...] | None = None  # None: no required node affinity
    tolerations: tuple[Toleration, ...] = ()
    preferred: tuple[PreferredTerm, ...] = ()  # preferred node affinity
    requests: PodRequests = EMPTY_CONTAINER
    unmodelled: tuple[str, ...] = ()  # fields of the pod simulate decides without
    pod: PodTerms = NO_TERMS  # its namespace, labels, inter-pod terms and spread constraints

    @property
    def unconstrained(self) -> bool:
        return not self.node_selector and self.required_terms is None


def untolerated_taint(node: SchedNode, placement: Placement) -> Taint | None:
    """The node's first taint that filters the pod out, None if it tolerates them all."""
    for taint in node.taints:
        if taint.effect in FILTERED_EFFECTS and not any(
            t.tolerates(taint) for t in placement.tolerations
        ):
            return taint
    return None


def cordoned_out(node: SchedNode, placement: Placement) -> bool:
    """NodeUnschedulable: the node is cordoned and the pod does not tolerate its taint."""
    taint = Taint("node.kubernetes.io/unschedulable", "NoSchedule")
    return node.unschedulable and not any(t.tolerates(taint) for t in placement.tolerations)


def filter_reason(node: SchedNode, placement: Placement) -> str | None:
    """Why the node is filtered out (the scheduler's words), None if it passes."""
    if cordoned_out(node, placement):
        return UNSCHEDULABLE
    if untolerated_taint(node, placement) is not None:
        return UNTOLERATED
    return None if matches_node_affinity(node, placement) else NO_AFFINITY


def matches_node_affinity(node: SchedNode, placement: Placement) -> bool:
    """The pod's nodeSelector and required node affinity (nodeaffinity.GetRequiredNodeAffinity)."""
    if placement.unconstrained:
        return True
    if any(node.labels.get(k) != v for k, v in placement.node_selector.items()):
        return False
    terms = placement.required_terms
    return terms is None or any(t.matches(node.name, node.labels) for t in terms)
