"""A simulation's input, decoded and checked: the nodes with their fake hardware, the API
objects to create, and the pods to schedule in creation order. Reading and checking a scenario
file lives in scenario_load.py; these are the values the run consumes.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from npu_dra.adapters.kube_shapes.errors import ShapeError
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import NodeName
from npu_dra.domain.scheduling.extended import ExtendedRequest
from npu_dra.domain.scheduling.placement import Placement, SchedNode
from npu_dra.domain.scheduling.pod_terms import PodTerms
from npu_dra.domain.scheduling.taint_rules import DeviceTaintRule

if TYPE_CHECKING:
    from npu_dra.adapters.simulation_files.scenario_nodes import NodeSharing


class ScenarioError(Exception):
    """A scenario file is unusable; the message names the file, the object and the field."""


@attrs.frozen
class Refusal:
    """An object the API server would refuse at create: reported, and left out of the run as the
    cluster leaves it out, while everything else runs."""

    kind: str
    namespace: str
    name: str
    field: str
    reason: str

    @classmethod
    def of(cls, doc: Mapping[str, Any], error: DomainError) -> "Refusal":
        meta = doc.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        field, reason = (
            (error.field, error.reason) if isinstance(error, ShapeError) else ("", str(error))
        )
        kind, namespace, name = doc.get("kind"), meta.get("namespace"), meta.get("name")
        return cls(str(kind), str(namespace or ""), str(name or "?"), field, reason)

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        field = f"field {self.field}: " if self.field else ""
        return f"{self.kind} {where}: {field}{self.reason}"


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
    nodes: tuple[tuple[NodeName, Mapping[str, Any], "NodeSharing"], ...]  # name, hardware
    sched_nodes: tuple[SchedNode, ...]
    device_classes: tuple[Mapping[str, Any], ...]
    claims: tuple[Mapping[str, Any], ...]
    templates: tuple[Mapping[str, Any], ...]
    pods: tuple[SimPod, ...]
    # From a cluster's snapshot (--from): ResourceSlices already published (any driver), and
    # pods already bound, as ("namespace/name", node).
    slices: tuple[Mapping[str, Any], ...] = ()
    bound: tuple[tuple[str, str], ...] = ()
    refused: tuple[Refusal, ...] = ()  # objects left out, as the API server refuses them
    # the Namespace objects' labels, by name (namespaceSelector of inter-pod terms)
    namespaces: Mapping[str, Mapping[str, str]] = attrs.field(factory=dict)
    # the labels and inter-pod terms of a snapshot's bound pods, by "namespace/name"
    bound_terms: Mapping[str, PodTerms] = attrs.field(factory=dict)
    # a snapshot's objects of kinds simulate does not use (Service...), how many of each
    skipped: Mapping[str, int] = attrs.field(factory=dict)
    taint_rules: tuple[DeviceTaintRule, ...] = ()  # DeviceTaintRule objects
    # a snapshot's ValidatingAdmissionPolicies and bindings (None: it holds none of either)
    admission_policies: tuple[Mapping[str, Any], ...] | None = None
    warnings: tuple[str, ...] = ()  # what the run assumed, for stderr and the documents
