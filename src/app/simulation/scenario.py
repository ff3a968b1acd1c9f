"""Scenario files: Kubernetes-shaped YAML (SimulatedNode, DeviceClass, ResourceClaim,
ResourceClaimTemplate, Pod) checked up front, so a mistake is reported with the file, the object
and the field instead of surfacing halfway through a run.
"""

from collections.abc import Callable, Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import yaml

from npu_dra.adapters.hardware.choose import fake_probe
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.nvml.fake import is_gpu_description
from npu_dra.adapters.kube_shapes.claims import claim_from_api, device_class_from_api, spec_from_api
from npu_dra.adapters.kube_shapes.errors import ShapeError
from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.app.simulation.extended import ExtendedRequest, extended_requests
from npu_dra.app.simulation.strict import check_known_fields
from npu_dra.domain.claims import ClaimSpec
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import NodeName
from npu_dra.domain.scheduling.placement import (
    Placement,
    Requirement,
    SchedNode,
    Taint,
    Term,
    Toleration,
)

KINDS = (
    "Namespace",
    "SimulatedNode",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "Pod",
)
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
ADMIN_ACCESS_FORBIDDEN = (
    "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
    "label on the containing namespace"
)


class ScenarioError(Exception):
    """A scenario file is unusable; the message names the file, the object and the field."""


@attrs.frozen
class PodClaim:
    name: str  # the pod's name for the claim
    claim: str | None  # resourceClaimName
    template: str | None  # resourceClaimTemplateName


@attrs.frozen
class SimPod:
    namespace: str
    name: str
    claims: tuple[PodClaim, ...]
    placement: Placement = attrs.field(factory=Placement)
    gates: tuple[str, ...] = ()
    extended: tuple[ExtendedRequest, ...] = ()  # extended-resource requests DRA may serve


@attrs.frozen
class Scenario:
    source: str
    nodes: tuple[tuple[NodeName, Mapping[str, Any]], ...]
    sched_nodes: tuple[SchedNode, ...]
    device_classes: tuple[Mapping[str, Any], ...]
    claims: tuple[Mapping[str, Any], ...]
    templates: tuple[Mapping[str, Any], ...]
    pods: tuple[SimPod, ...]


def load_scenario(path: Path | None) -> Scenario:
    """The user's scenario, or the built-in default (the seed's flow) when `path` is None."""
    if path is None:
        text = resources.files("npu_dra.app.simulation").joinpath("default.yaml").read_text()
        return parse_scenario(text, source="built-in default scenario")
    try:
        text = path.read_text()
    except OSError as error:
        raise ScenarioError(f"{path}: {error.strerror or error}") from error
    return parse_scenario(text, source=str(path))


def parse_scenario(text: str, *, source: str) -> Scenario:
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as error:
        raise ScenarioError(f"{source}: not valid YAML: {error}") from error
    return scenario_from_documents(documents, source=source)


def scenario_from_documents(documents: list[Any], *, source: str) -> Scenario:
    by_kind: dict[str, list[Mapping[str, Any]]] = {k: [] for k in KINDS}
    try:
        for index, doc in enumerate(documents):
            kind = _kind_of(doc, source, index)
            check_known_fields(doc, kind)
            by_kind[kind].append(doc)
        return _checked(source, by_kind)
    except DomainError as error:
        raise ScenarioError(f"{source}: {error}") from error


def _kind_of(doc: object, source: str, index: int) -> str:
    if not isinstance(doc, Mapping):
        raise ScenarioError(f"{source}: document {index + 1}: expected a Kubernetes object")
    kind = doc.get("kind")
    if kind not in KINDS:
        where = describe(doc) if isinstance(kind, str) else f"document {index + 1}"
        raise ScenarioError(
            f"{source}: {where}: field kind: {kind!r} is not one of {', '.join(KINDS)}"
        )
    return str(kind)


def _checked(source: str, by_kind: Mapping[str, list[Mapping[str, Any]]]) -> Scenario:
    nodes = tuple(_node(d) for d in by_kind["SimulatedNode"])
    if not nodes:
        raise ScenarioError(f"{source}: no SimulatedNode objects: nothing to simulate")
    admin_namespaces = _admin_namespaces(by_kind["Namespace"])
    for doc in by_kind["DeviceClass"]:
        device_class_from_api(doc)
    for doc in by_kind["ResourceClaim"]:
        claim = claim_from_api(doc)
        _check_admin_access(doc, claim.spec, claim.ref.namespace, admin_namespaces, "spec")
    for doc in by_kind["ResourceClaimTemplate"]:
        root = Fields(doc, obj=describe(doc))
        root.sub("metadata").need("name", str)
        spec = spec_from_api(root.sub("spec").sub("spec").sub("devices"))
        namespace = root.sub("metadata").get("namespace", str, "default")
        _check_admin_access(doc, spec, namespace, admin_namespaces, "spec.spec")
    pods = tuple(_pod(d) for d in by_kind["Pod"])
    _reject_duplicates(by_kind)
    return Scenario(
        source,
        tuple((name, hardware) for name, hardware, _ in nodes),
        tuple(node for _, _, node in nodes),
        tuple(by_kind["DeviceClass"]),
        tuple(by_kind["ResourceClaim"]),
        tuple(by_kind["ResourceClaimTemplate"]),
        pods,
    )


def _reject_duplicates(by_kind: Mapping[str, list[Mapping[str, Any]]]) -> None:
    """Two objects with one kind, namespace and name would collide in the cluster."""
    seen: set[tuple[str, str, str]] = set()
    for kind, docs in by_kind.items():
        for doc in docs:
            meta = doc["metadata"]
            key = (kind, str(meta.get("namespace") or ""), str(meta["name"]))
            if key in seen:
                raise Fields(doc, obj=describe(doc)).sub("metadata").fail("name", "defined twice")
            seen.add(key)


def _admin_namespaces(docs: list[Mapping[str, Any]]) -> set[str]:
    found = set()
    for doc in docs:
        meta = Fields(doc, obj=describe(doc)).sub("metadata")
        if meta.mapping("labels").get(ADMIN_ACCESS_LABEL) == "true":
            found.add(meta.need("name", str))
    return found


def _check_admin_access(
    doc: Mapping[str, Any], spec: ClaimSpec, namespace: str, admin: set[str], at: str
) -> None:
    """The API server refuses adminAccess outside namespaces labelled for it."""
    for i, request in enumerate(spec.requests):
        if request.admin_access and namespace not in admin:
            field = f"{at}.devices.requests[{i}].exactly.adminAccess"
            raise Fields(doc, obj=describe(doc)).fail(field, ADMIN_ACCESS_FORBIDDEN)


def _node(doc: Mapping[str, Any]) -> tuple[NodeName, Mapping[str, Any], SchedNode]:
    root = Fields(doc, obj=describe(doc))
    name = root.sub("metadata").need("name", str)
    hardware = root.sub("spec").need("hardware", dict)
    if not is_gpu_description(hardware) and "chip" not in hardware:
        raise (
            root.sub("spec")
            .sub("hardware")
            .fail("chip", "is required (an Ascend node), or gpu: for an NVIDIA node")
        )
    if "nvidiaSmiXml" not in hardware:
        root.sub("spec").sub("hardware").need("count", int)
    try:  # the node's fake hardware must build now, not halfway through the run
        fake_probe(hardware, node=NodeName(name)).probe()
    except ProbeError as error:
        raise root.sub("spec").fail("hardware", str(error)) from error
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        **_strings(root.sub("metadata"), "labels"),
    }
    taints = tuple(
        Taint(t.need("key", str), _effect(t), t.get("value", str, ""))
        for t in root.sub("spec").items("taints")
    )
    return NodeName(name), hardware, SchedNode(name, labels, taints)


def _effect(fields: Fields) -> str:
    effect = fields.need("effect", str)
    if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
        raise fields.fail("effect", f"{effect!r} is not NoSchedule, PreferNoSchedule or NoExecute")
    return effect


def _strings(fields: Fields, key: str) -> dict[str, str]:
    found = fields.mapping(key)
    for name, value in found.items():
        if not isinstance(value, str):
            raise fields.fail(f"{key}.{name}", f"expected str, got {value!r}")
    return dict(found)


def _pod(doc: Mapping[str, Any]) -> SimPod:
    root = Fields(doc, obj=describe(doc))
    meta = root.sub("metadata")
    spec = root.sub("spec")
    claims = []
    for entry in spec.items("resourceClaims"):
        claim = entry.opt("resourceClaimName", str)
        template = entry.opt("resourceClaimTemplateName", str)
        if (claim is None) == (template is None):
            raise entry.fail(
                "resourceClaimName", "exactly one of resourceClaimName, resourceClaimTemplateName"
            )
        claims.append(PodClaim(entry.need("name", str), claim, template))
    containers = spec.items("containers")
    if not containers:
        raise spec.fail("containers", "Required value")
    for container in containers:
        container.need("name", str)
        container.need("image", str)
    gates = tuple(g.need("name", str) for g in spec.items("schedulingGates"))
    return SimPod(
        meta.get("namespace", str, "default"),
        meta.need("name", str),
        tuple(claims),
        _placement(spec),
        gates,
        extended_requests(doc.get("spec") or {}),
    )


def _placement(spec: Fields) -> Placement:
    tolerations = tuple(
        Toleration(
            t.get("key", str, ""),
            _operator(t),
            t.get("value", str, ""),
            t.get("effect", str, ""),
        )
        for t in spec.items("tolerations")
    )
    required = spec.sub("affinity").sub("nodeAffinity")
    terms = None
    if required.has("requiredDuringSchedulingIgnoredDuringExecution"):
        selector = required.sub("requiredDuringSchedulingIgnoredDuringExecution")
        terms = tuple(_term(t) for t in selector.items("nodeSelectorTerms"))
        if not terms:
            raise selector.fail("nodeSelectorTerms", "must have at least one term")
    return Placement(_strings(spec, "nodeSelector"), terms, tolerations)


def _operator(fields: Fields) -> str:
    operator = fields.get("operator", str, "Equal")
    if operator not in ("Equal", "Exists"):
        raise fields.fail("operator", f"{operator!r} is not Equal or Exists")
    if operator == "Exists" and fields.has("value"):
        raise fields.fail("value", "must be empty when operator is Exists")
    return operator


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _term(fields: Fields) -> Term:
    def requirement(r: Fields) -> Requirement:
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

    fields_reqs = tuple(requirement(r) for r in fields.items("matchFields"))
    for i, r in enumerate(fields_reqs):
        if r.key != "metadata.name":
            raise fields.fail(f"matchFields[{i}].key", "only metadata.name is supported")
    return Term(tuple(requirement(r) for r in fields.items("matchExpressions")), fields_reqs)


def check_selectors(scenario: Scenario, compile_error: Callable[..., str | None]) -> None:
    """Every CEL selector must compile, as the API server checks on create."""
    for doc in (*scenario.device_classes, *scenario.claims, *scenario.templates):
        for path, expression in _expressions(doc, ""):
            reason = compile_error(expression=expression)
            if reason is not None:
                error = ShapeError(
                    describe(doc), path, f"Invalid value: compilation failed: {reason}"
                )
                raise ScenarioError(f"{scenario.source}: {error}")


def _expressions(value: object, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if (
                key == "cel"
                and isinstance(item, Mapping)
                and isinstance(item.get("expression"), str)
            ):
                yield f"{where}.expression", item["expression"]
            else:
                yield from _expressions(item, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _expressions(item, f"{path}[{i}]")
