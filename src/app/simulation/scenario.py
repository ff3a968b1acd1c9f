"""Scenario files: Kubernetes-shaped YAML (SimulatedNode, DeviceClass, ResourceClaim,
ResourceClaimTemplate, Pod) checked up front, so a mistake is reported with the file, the object
and the field instead of surfacing halfway through a run.
"""

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import yaml

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.kube_shapes.claims import claim_from_api, device_class_from_api, spec_from_api
from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import NodeName

KINDS = ("SimulatedNode", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "Pod")


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


@attrs.frozen
class Scenario:
    source: str
    nodes: tuple[tuple[NodeName, Mapping[str, Any]], ...]
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
    by_kind: dict[str, list[Mapping[str, Any]]] = {k: [] for k in KINDS}
    for index, doc in enumerate(documents):
        by_kind[_kind_of(doc, source, index)].append(doc)
    try:
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
    for doc in by_kind["DeviceClass"]:
        device_class_from_api(doc)
    for doc in by_kind["ResourceClaim"]:
        claim_from_api(doc)
    for doc in by_kind["ResourceClaimTemplate"]:
        root = Fields(doc, obj=describe(doc))
        root.sub("metadata").need("name", str)
        spec_from_api(root.sub("spec").sub("spec").sub("devices"))
    pods = tuple(_pod(d) for d in by_kind["Pod"])
    _reject_duplicates(by_kind)
    return Scenario(
        source,
        nodes,
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


def _node(doc: Mapping[str, Any]) -> tuple[NodeName, Mapping[str, Any]]:
    root = Fields(doc, obj=describe(doc))
    name = root.sub("metadata").need("name", str)
    hardware = root.sub("spec").need("hardware", dict)
    if "chip" not in hardware:
        raise root.sub("spec").sub("hardware").fail("chip", "is required")
    root.sub("spec").sub("hardware").need("count", int)
    try:  # the node's fake hardware must build now, not halfway through the run
        FakeHardware(hardware, node=NodeName(name)).probe()
    except ProbeError as error:
        raise root.sub("spec").fail("hardware", str(error)) from error
    return NodeName(name), hardware


def _pod(doc: Mapping[str, Any]) -> SimPod:
    root = Fields(doc, obj=describe(doc))
    meta = root.sub("metadata")
    claims = []
    for entry in root.sub("spec").items("resourceClaims"):
        claim = entry.opt("resourceClaimName", str)
        template = entry.opt("resourceClaimTemplateName", str)
        if (claim is None) == (template is None):
            raise entry.fail(
                "resourceClaimName", "exactly one of resourceClaimName, resourceClaimTemplateName"
            )
        claims.append(PodClaim(entry.need("name", str), claim, template))
    return SimPod(meta.get("namespace", str, "default"), meta.need("name", str), tuple(claims))
