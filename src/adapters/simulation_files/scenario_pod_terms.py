"""A pod's inter-pod affinity and topology spread constraints, decoded with the API server's
checks (kubernetes v1.34.3 pkg/apis/core/validation/validation.go `validatePodAffinityTerm`,
`validateWeightedPodAffinityTerms`, `validateTopologySpreadConstraints`; the label selectors'
apimachinery ValidateLabelSelector) and its mutation on create: matchLabelKeys become `In` and
mismatchLabelKeys `NotIn` requirements of the selector, with the pod's own values, where the pod
has the label (pkg/registry/core/pod/strategy.go `mutatePodAffinity`,
`mutateTopologySpreadConstraints`). Where the pod names no namespace and no namespaceSelector, a
term selects its own namespace (pkg/scheduler/framework/types.go
`getNamespacesFromPodAffinityTerm`).
"""

from collections.abc import Iterable, Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.domain.scheduling.pod_terms import (
    AffinityTerm,
    LabelSelector,
    PodTerms,
    SelectorRequirement,
    SpreadConstraint,
    WeightedTerm,
)

_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
_POLICIES = ("Honor", "Ignore")
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def pod_terms(meta: Fields, spec: Fields) -> PodTerms:
    namespace = meta.get("namespace", str, "default")
    labels = _labels(meta)
    both = spec.sub("affinity")
    if not (both.has("podAffinity") or both.has("podAntiAffinity")) and not spec.has(
        "topologySpreadConstraints"
    ):
        return PodTerms(namespace, labels)  # most of a snapshot's pods: read fast
    own = (namespace, labels)
    affinity, anti = both.sub("podAffinity"), both.sub("podAntiAffinity")
    return PodTerms(
        namespace,
        labels,
        tuple(_term(t, own) for t in affinity.items(_REQUIRED)),
        tuple(_term(t, own) for t in anti.items(_REQUIRED)),
        tuple(_weighted(t, own) for t in affinity.items(_PREFERRED)),
        tuple(_weighted(t, own) for t in anti.items(_PREFERRED)),
        _spread(spec, labels),
    )


def _labels(meta: Fields) -> dict[str, str]:
    found = meta.mapping("labels")
    for name, value in found.items():
        if not isinstance(value, str):
            raise meta.fail(f"labels.{name}", f"expected str, got {value!r}")
    return dict(found)


def _weighted(fields: Fields, own: tuple[str, Mapping[str, str]]) -> WeightedTerm:
    weight = fields.need("weight", int)
    if not 1 <= weight <= 100:
        raise fields.fail("weight", "must be in the range 1-100")
    if not fields.has("podAffinityTerm"):
        raise fields.fail("podAffinityTerm", "Required value")
    return WeightedTerm(weight, _term(fields.sub("podAffinityTerm"), own))


def _term(fields: Fields, own: tuple[str, Mapping[str, str]]) -> AffinityTerm:
    namespace, labels = own
    key = _topology_key(fields)
    selector = _with_label_keys(fields, _selector(fields, "labelSelector"), labels)
    names = frozenset(str(n) for n in fields.get("namespaces", list, []))
    namespace_selector = _selector(fields, "namespaceSelector")
    if not names and namespace_selector is None:
        names = frozenset({namespace})
    return AffinityTerm(selector, key, names, namespace_selector)


def _spread(spec: Fields, labels: Mapping[str, str]) -> tuple[SpreadConstraint, ...]:
    found: list[SpreadConstraint] = []
    seen: set[tuple[str, bool]] = set()
    for fields in spec.items("topologySpreadConstraints"):
        constraint = _constraint(fields, labels)
        if (constraint.topology_key, constraint.hard) in seen:
            raise fields.fail("{topologyKey, whenUnsatisfiable}", "Duplicate value")
        seen.add((constraint.topology_key, constraint.hard))
        found.append(constraint)
    return tuple(found)


def _constraint(fields: Fields, labels: Mapping[str, str]) -> SpreadConstraint:
    skew = fields.need("maxSkew", int)
    if skew <= 0:
        raise fields.fail("maxSkew", "must be greater than zero")
    action = _one_of(fields, "whenUnsatisfiable", _ACTIONS, None)
    minimum = fields.opt("minDomains", int)
    if minimum is not None and minimum <= 0:
        raise fields.fail("minDomains", "must be greater than zero")
    if minimum is not None and action != "DoNotSchedule":
        raise fields.fail(
            "minDomains",
            f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
        )
    selector = _with_label_keys(fields, _selector(fields, "labelSelector"), labels)
    return SpreadConstraint(
        skew,
        _topology_key(fields),
        action == "DoNotSchedule",
        selector,
        1 if minimum is None else minimum,
        _one_of(fields, "nodeAffinityPolicy", _POLICIES, "Honor") == "Honor",
        _one_of(fields, "nodeTaintsPolicy", _POLICIES, "Ignore") == "Honor",
    )


def _topology_key(fields: Fields) -> str:
    key = fields.get("topologyKey", str, "")
    if not key:
        raise fields.fail("topologyKey", "Required value: can not be empty")
    return key


def _one_of(fields: Fields, key: str, allowed: tuple[str, ...], default: str | None) -> str:
    value = fields.opt(key, str) if default is None else fields.get(key, str, default)
    if value not in allowed:
        shown = ", ".join(f'"{a}"' for a in allowed)
        raise fields.fail(key, f"Unsupported value: {value!r}: supported values: {shown}")
    return value


def _keys(fields: Fields, key: str) -> tuple[str, ...]:
    found = fields.get(key, list, [])
    for i, value in enumerate(found):
        if not isinstance(value, str) or not value:
            raise fields.fail(f"{key}[{i}]", f"expected a label key, got {value!r}")
    return tuple(found)


def _with_label_keys(
    fields: Fields, selector: LabelSelector | None, labels: Mapping[str, str]
) -> LabelSelector | None:
    """The selector with matchLabelKeys (`In`) and mismatchLabelKeys (`NotIn`) merged, checked
    as ValidateMatchLabelKeysAndMismatchLabelKeys checks the merged selector. A requirement the
    selector already has is not added again: a snapshot's pods come merged."""
    match, mismatch = _keys(fields, "matchLabelKeys"), _keys(fields, "mismatchLabelKeys")
    for key, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
        if keys and selector is None:
            raise fields.fail(key, "Forbidden: must not be specified when labelSelector is not set")
    for i, k in enumerate(match):
        if k in mismatch:
            raise fields.fail(
                f"matchLabelKeys[{i}]", "exists in both matchLabelKeys and mismatchLabelKeys"
            )
    if selector is None:
        return None
    wanted = [(k, "In") for k in match] + [(k, "NotIn") for k in mismatch]
    more = (SelectorRequirement(k, op, frozenset({labels[k]})) for k, op in wanted if k in labels)
    seen = set(fields.sub("labelSelector").mapping("matchLabels"))
    expressions = selector.requirements[len(seen) :]  # _selector puts matchLabels first
    merged = (*selector.requirements, *(r for r in more if r not in expressions))
    for r in merged[len(seen) :]:
        if r.key in match and r.key in seen:
            where = f"matchLabelKeys[{match.index(r.key)}]"
            raise fields.fail(where, "exists in both matchLabelKeys and labelSelector")
        seen.add(r.key)
    return LabelSelector(merged)


def _selector(fields: Fields, key: str) -> LabelSelector | None:
    """None where the selector is not set: it matches nothing."""
    if fields.opt(key, dict) is None:
        return None
    sub = fields.sub(key)
    found = []
    for name, value in sub.mapping("matchLabels").items():
        if not isinstance(value, str):
            raise sub.fail(f"matchLabels.{name}", f"expected str, got {value!r}")
        found.append(SelectorRequirement(name, "In", frozenset({value})))
    found += [_requirement(r) for r in sub.items("matchExpressions")]
    return LabelSelector(tuple(found))


def _requirement(r: Fields) -> SelectorRequirement:
    operator = r.need("operator", str)
    if operator not in _SELECTOR_OPERATORS:
        raise r.fail("operator", f"{operator!r} is not a valid label selector operator")
    values = frozenset(str(v) for v in r.get("values", list, []))
    if operator in ("In", "NotIn") and not values:
        raise r.fail("values", "must be specified when `operator` is 'In' or 'NotIn'")
    if operator in ("Exists", "DoesNotExist") and values:
        raise r.fail("values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    return SelectorRequirement(r.need("key", str), operator, values)


def namespace_labels(docs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """The labels of admitted Namespace objects, by name."""
    found = {}
    for doc in docs:
        meta = doc.get("metadata") or {}
        found[str(meta.get("name"))] = {
            str(k): str(v) for k, v in (meta.get("labels") or {}).items()
        }
    return found
