"""Where a scenario's pods may run, decoded with the API server's checks: a node's labels and
taints, and a pod's nodeSelector, tolerations, node affinity (required and preferred), resource
requests (scenario_resources.py), and with its metadata its inter-pod affinity and topology
spread constraints (scenario_pod_terms.py). The node filters in domain/scheduling/placement.py,
resources.py, topology_spread.py and pod_affinity.py then judge them as kube-scheduler does,
and scoring.py ranks what passes.
"""

from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.adapters.simulation_files.scenario_pod_terms import pod_terms
from npu_dra.adapters.simulation_files.scenario_resources import pod_resources
from npu_dra.domain.scheduling.placement import (
    Placement,
    PreferredTerm,
    Requirement,
    Taint,
    Term,
    Toleration,
)

_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def node_labels(name: str, meta: Fields) -> dict[str, str]:
    """The labels the kubelet sets on every node, then the scenario's own."""
    return {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        **_strings(meta, "labels"),
    }


def node_taints(spec: Fields) -> tuple[Taint, ...]:
    return tuple(
        Taint(t.need("key", str), _effect(t), t.get("value", str, "")) for t in spec.items("taints")
    )


def pod_placement(spec: Fields, meta: Fields) -> Placement:
    tolerations = tuple(
        Toleration(
            t.get("key", str, ""),
            _operator(t),
            t.get("value", str, ""),
            t.get("effect", str, ""),
        )
        for t in spec.items("tolerations")
    )
    affinity = spec.sub("affinity").sub("nodeAffinity")
    terms = None
    if affinity.has("requiredDuringSchedulingIgnoredDuringExecution"):
        selector = affinity.sub("requiredDuringSchedulingIgnoredDuringExecution")
        terms = tuple(_term(t) for t in selector.items("nodeSelectorTerms"))
        if not terms:
            raise selector.fail("nodeSelectorTerms", "must have at least one term")
    preferred = tuple(
        _preferred(p) for p in affinity.items("preferredDuringSchedulingIgnoredDuringExecution")
    )
    return Placement(
        _strings(spec, "nodeSelector"),
        terms,
        tolerations,
        preferred,
        pod_resources(spec),
        pod=pod_terms(meta, spec),
    )


def _preferred(fields: Fields) -> PreferredTerm:
    weight = fields.need("weight", int)
    if not 1 <= weight <= 100:
        raise fields.fail("weight", "must be in the range 1-100")
    if not fields.has("preference"):
        raise fields.fail("preference", "Required value")
    return PreferredTerm(weight, _term(fields.sub("preference")))


def _effect(fields: Fields) -> str:
    effect = fields.need("effect", str)
    if effect not in _EFFECTS:
        raise fields.fail("effect", f"{effect!r} is not NoSchedule, PreferNoSchedule or NoExecute")
    return effect


def _strings(fields: Fields, key: str) -> dict[str, str]:
    found = fields.mapping(key)
    for name, value in found.items():
        if not isinstance(value, str):
            raise fields.fail(f"{key}.{name}", f"expected str, got {value!r}")
    return dict(found)


def _operator(fields: Fields) -> str:
    operator = fields.get("operator", str, "Equal")
    if operator not in ("Equal", "Exists"):
        raise fields.fail("operator", f"{operator!r} is not Equal or Exists")
    if operator == "Exists" and fields.has("value"):
        raise fields.fail("value", "must be empty when operator is Exists")
    return operator


def _term(fields: Fields) -> Term:
    fields_reqs = tuple(_requirement(r) for r in fields.items("matchFields"))
    for i, r in enumerate(fields_reqs):
        if r.key != "metadata.name":
            raise fields.fail(f"matchFields[{i}].key", "only metadata.name is supported")
    return Term(tuple(_requirement(r) for r in fields.items("matchExpressions")), fields_reqs)


def _requirement(r: Fields) -> Requirement:
    operator = r.need("operator", str)
    if operator not in _OPERATORS:
        raise r.fail("operator", f"{operator!r} is not one of {', '.join(_OPERATORS)}")
    values = tuple(str(v) for v in r.get("values", list, []))
    if operator in ("In", "NotIn") and not values:
        raise r.fail("values", "must be specified when operator is In or NotIn")
    if operator in ("Exists", "DoesNotExist") and values:
        raise r.fail("values", "may not be specified when operator is Exists or DoesNotExist")
    if operator in ("Gt", "Lt") and len(values) != 1:
        raise r.fail("values", "must be specified single value when operator is Gt or Lt")
    return Requirement(r.need("key", str), operator, values)
