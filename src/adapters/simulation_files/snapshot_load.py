"""`simulate --from FILE`: a real cluster's state, as

    kubectl get nodes,resourceslices,deviceclasses,resourceclaims,resourceclaimtemplates,pods \\
        -A -o yaml

prints it (a `List`, or the same objects as YAML or JSON documents), decoded as strictly as a
scenario. Slices of any driver are taken as published; claims with an allocation hold their
devices; pods bound to a node (spec.nodeName) stay there and count, with their requests,
against its `status.allocatable`; pods that finished are left out; the other pods are scheduled
in creation order. A template's claim that the resourceclaim controller already made
(status.resourceClaimStatuses) is used, not made again. Bound pods keep their namespace, labels
and inter-pod terms, and namespaces their labels, for InterPodAffinity and PodTopologySpread.
A cordoned node (spec.unschedulable) carries the taint the node lifecycle controller gives it.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.adapters.simulation_files.admission_policies import POLICY_KINDS
from npu_dra.adapters.simulation_files.scenario import PodClaim, Scenario, ScenarioError, SimPod
from npu_dra.adapters.simulation_files.scenario_claims import check_claim_objects
from npu_dra.adapters.simulation_files.scenario_load import (
    MAX_NODES,
    MAX_PODS,
    documents_of,
    read_text,
)
from npu_dra.adapters.simulation_files.scenario_placement import node_labels, node_taints
from npu_dra.adapters.simulation_files.scenario_pod_terms import namespace_labels, pod_terms
from npu_dra.adapters.simulation_files.scenario_pods import sim_pod
from npu_dra.adapters.simulation_files.scenario_resources import pod_resources, reported_allocatable
from npu_dra.adapters.simulation_files.strict import check_known_fields
from npu_dra.adapters.simulation_files.taint_rules import device_taint_rule
from npu_dra.adapters.simulation_files.what_if import CORDONED
from npu_dra.domain.errors import DomainError
from npu_dra.domain.scheduling.placement import SchedNode
from npu_dra.domain.scheduling.pod_terms import PodTerms
from npu_dra.domain.scheduling.resources import NO_USAGE, Usage

KINDS = (
    "Namespace",
    "Node",
    "ResourceSlice",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "Pod",
    "DeviceTaintRule",
    *POLICY_KINDS,  # admission_policies.py: read, not checked field by field
)
FINISHED = ("Succeeded", "Failed")  # their claims' allocations still count, the pods do not
MAX_SLICES = 200_000  # a 5,000-node cluster with a vNPU slice per chip of 16-chip nodes is 80,000


def load_snapshot(path: Path) -> Scenario:
    return snapshot_of(str(path), documents_of(read_text(path), str(path)))


def snapshot_of(source: str, documents: list[Any]) -> Scenario:
    """The snapshot of these documents (a file's, or a live cluster's objects: `--from-cluster`),
    `source` naming where they came from in every error."""
    try:
        by_kind, skipped = _by_kind(source, _objects(documents))
        return attrs.evolve(_snapshot(source, by_kind), skipped=skipped)
    except DomainError as error:
        raise ScenarioError(f"{source}: {error}") from error


def snapshot_limits() -> dict[str, int]:
    """The most objects of a kind a snapshot may hold, for a live read to stop at."""
    return {"Node": MAX_NODES, "Pod": MAX_PODS, "ResourceSlice": MAX_SLICES}


def _objects(documents: list[Any]) -> list[Any]:
    """The documents, a `List`'s items in its place."""
    found: list[Any] = []
    for doc in documents:
        if isinstance(doc, Mapping) and doc.get("kind") == "List":
            found += list(doc.get("items") or [])
        else:
            found.append(doc)
    return found


def _by_kind(
    source: str, objects: list[Any]
) -> tuple[dict[str, list[Mapping[str, Any]]], dict[str, int]]:
    """The objects simulate uses, by kind, and how many of each other kind were skipped (what
    `kubectl get all` adds: Services, Deployments...)."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {k: [] for k in KINDS}
    skipped: dict[str, int] = {}
    for index, obj in enumerate(objects):
        kind = obj.get("kind") if isinstance(obj, Mapping) else None
        if not isinstance(kind, str) or not kind:
            raise ScenarioError(
                f"{source}: object {index + 1}: kind {kind!r} is not one of {', '.join(KINDS)}"
            )
        if kind not in KINDS:
            skipped[kind] = skipped.get(kind, 0) + 1
            continue
        if kind not in POLICY_KINDS:
            check_known_fields(obj, kind)
        by_kind[kind].append(obj)
    for kind, limit in snapshot_limits().items():
        if len(by_kind[kind]) > limit:
            raise ScenarioError(f"{source}: {len(by_kind[kind])} {kind} objects: at most {limit}")
    return by_kind, dict(sorted(skipped.items()))


def _snapshot(source: str, by_kind: Mapping[str, list[Mapping[str, Any]]]) -> Scenario:
    if not by_kind["Node"]:
        raise ScenarioError(f"{source}: no Node objects: nothing to schedule on")
    check_claim_objects(by_kind, admitted=True)
    live = [p for p in by_kind["Pod"] if (p.get("status") or {}).get("phase") not in FINISHED]
    on_nodes = [p for p in live if (p.get("spec") or {}).get("nodeName")]
    bound = tuple(
        (f"{_namespace(p)}/{p['metadata']['name']}", str(p["spec"]["nodeName"])) for p in on_nodes
    )
    held = _held(on_nodes)
    pending = sorted(
        (p for p in live if not (p.get("spec") or {}).get("nodeName")), key=_creation_order
    )
    return Scenario(
        source,
        (),
        tuple(_sched_node(n, held.get(_name(n), NO_USAGE)) for n in by_kind["Node"]),
        tuple(by_kind["DeviceClass"]),
        tuple(by_kind["ResourceClaim"]),
        tuple(by_kind["ResourceClaimTemplate"]),
        tuple(_pending_pod(p) for p in pending),
        slices=tuple(by_kind["ResourceSlice"]),
        bound=bound,
        namespaces=namespace_labels(by_kind["Namespace"]),
        bound_terms={name: _terms(p) for (name, _), p in zip(bound, on_nodes, strict=True)},
        taint_rules=tuple(map(device_taint_rule, by_kind["DeviceTaintRule"])),
        admission_policies=_policies(by_kind),
    )


def _policies(
    by_kind: Mapping[str, list[Mapping[str, Any]]],
) -> tuple[Mapping[str, Any], ...] | None:
    found = tuple(doc for kind in POLICY_KINDS for doc in by_kind[kind])
    return found or None


def _terms(doc: Mapping[str, Any]) -> PodTerms:
    root = Fields(doc, obj=describe(doc))
    return pod_terms(root.sub("metadata"), root.sub("spec"))


def _sched_node(doc: Mapping[str, Any], held: Usage) -> SchedNode:
    root = Fields(doc, obj=describe(doc))
    name = root.sub("metadata").need("name", str)
    taints = node_taints(root.sub("spec"))
    cordoned = root.sub("spec").get("unschedulable", bool, False)
    if cordoned and CORDONED not in taints:
        taints = (*taints, CORDONED)
    allocatable = reported_allocatable(root.sub("status"))
    labels = node_labels(name, root.sub("metadata"))
    return SchedNode(name, labels, taints, allocatable, held, unschedulable=cordoned)


def _held(pods: list[Mapping[str, Any]]) -> dict[str, Usage]:
    """Per node, what its bound pods request (their count comes as each is bound in the run)."""
    held: dict[str, Usage] = {}
    for pod in pods:
        requests = pod_resources(Fields(pod, obj=describe(pod)).sub("spec"))
        node = str(pod["spec"]["nodeName"])
        held[node] = held.get(node, NO_USAGE).plus(requests, pods=0)
    return held


def _name(doc: Mapping[str, Any]) -> str:
    return str((doc.get("metadata") or {}).get("name"))


def _pending_pod(doc: Mapping[str, Any]) -> SimPod:
    """The pod, its template claims replaced by those the controller already made."""
    pod = sim_pod(doc)
    made = {
        str(s.get("name")): s.get("resourceClaimName")
        for s in (doc.get("status") or {}).get("resourceClaimStatuses") or []
        if isinstance(s, Mapping)
    }
    claims = tuple(
        PodClaim(c.name, str(made[c.name]), None) if made.get(c.name) else c for c in pod.claims
    )
    return attrs.evolve(pod, claims=claims)


def _namespace(doc: Mapping[str, Any]) -> str:
    return str(doc["metadata"].get("namespace") or "default")


def _creation_order(doc: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = doc["metadata"]
    return (str(meta.get("creationTimestamp") or ""), _namespace(doc), str(meta.get("name")))


def with_overlay(snapshot: Scenario, overlay: Scenario) -> Scenario:
    """The snapshot with a scenario's what-ifs on top: its SimulatedNodes, classes, claims and
    pods (after the snapshot's pending ones). A name used by both is an error."""
    taken = {n.name for n in snapshot.sched_nodes}
    for node in overlay.sched_nodes:
        if node.name in taken:
            raise ScenarioError(f"{overlay.source}: SimulatedNode {node.name}: the snapshot has it")
    for kind, ours, theirs in (
        ("DeviceClass", snapshot.device_classes, overlay.device_classes),
        ("ResourceClaim", snapshot.claims, overlay.claims),
        ("ResourceClaimTemplate", snapshot.templates, overlay.templates),
    ):
        clash = {_key(o) for o in ours} & {_key(o) for o in theirs}
        if clash:
            raise ScenarioError(f"{overlay.source}: {kind} {min(clash)}: the snapshot has it")
    return attrs.evolve(
        snapshot,
        source=f"{snapshot.source} + {overlay.source}",
        nodes=overlay.nodes,
        sched_nodes=(*snapshot.sched_nodes, *overlay.sched_nodes),
        device_classes=(*snapshot.device_classes, *overlay.device_classes),
        claims=(*snapshot.claims, *overlay.claims),
        templates=(*snapshot.templates, *overlay.templates),
        pods=(*snapshot.pods, *overlay.pods),
        taint_rules=(*snapshot.taint_rules, *overlay.taint_rules),
        refused=(*snapshot.refused, *overlay.refused),
        namespaces={**snapshot.namespaces, **overlay.namespaces},
    )


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return "/".join(filter(None, (str(meta.get("namespace") or ""), str(meta.get("name")))))
