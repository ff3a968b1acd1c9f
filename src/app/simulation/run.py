"""Runs a scenario: every node publishes its pool, claims are created (templates become claims as
the resourceclaim controller would do), each pod's claims are allocated on one node the way the
scheduler would, and that node's plugin prepares them exactly as for NodePrepareResources.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.kube_shapes.claims import claim_from_api, device_class_from_api
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.app.simulation.scenario import PodClaim, Scenario, SimPod
from npu_dra.domain.allocation import DeviceKey, Unsatisfiable, allocate
from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.claims import Allocation, DeviceClass, ResourceClaim
from npu_dra.domain.ids import ClaimUID, DeviceClassName, NodeName
from npu_dra.domain.ports import CdiStore, SelectorEvaluator
from npu_dra.domain.prepare import ClaimOutcome


@attrs.frozen
class NodePlugin:
    """One simulated node's plugin: the same services the kubelet plugin runs."""

    name: NodeName
    publisher: PoolPublisher
    preparer: ClaimPreparer
    cdi: CdiStore


@attrs.frozen
class PodResult:
    pod: SimPod
    node: NodeName | None
    claims: tuple[ResourceClaim, ...]
    reason: str | None = None
    outcomes: Mapping[ClaimUID, ClaimOutcome] = attrs.field(factory=dict)


@attrs.frozen
class SimulationResult:
    slices: tuple[dict[str, Any], ...]
    pods: tuple[PodResult, ...]
    specs: Mapping[ClaimUID, CdiSpec]


def simulate(
    scenario: Scenario,
    *,
    cluster: MemoryCluster,
    plugins: Sequence[NodePlugin],
    evaluator: SelectorEvaluator,
) -> SimulationResult:
    for plugin in plugins:
        cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": plugin.name}})
        plugin.publisher.publish()
    for obj in (*scenario.device_classes, *scenario.claims, *scenario.templates):
        cluster.create(obj)
    classes = {c.name: c for c in map(device_class_from_api, scenario.device_classes)}
    by_node = {p.name: p for p in plugins}
    results = [_run_pod(pod, cluster, classes, by_node, evaluator) for pod in scenario.pods]
    specs = {
        uid: spec
        for plugin in plugins
        for uid in sorted(plugin.cdi.claim_uids())
        if (spec := plugin.cdi.read(uid=uid)) is not None
    }
    return SimulationResult(tuple(cluster.list("ResourceSlice")), tuple(results), specs)


def _run_pod(
    pod: SimPod,
    cluster: MemoryCluster,
    classes: Mapping[DeviceClassName, DeviceClass],
    plugins: Mapping[NodeName, NodePlugin],
    evaluator: SelectorEvaluator,
) -> PodResult:
    try:
        claims = [_claim_for(pod, entry, cluster) for entry in pod.claims]
    except LookupError as missing:
        return PodResult(pod, None, (), f"claim not found: {missing}")
    placement = _place(claims, cluster, classes, plugins, evaluator)
    if isinstance(placement, str):
        return PodResult(pod, None, tuple(claims), placement)
    node, allocations = placement
    for claim, allocation in zip(claims, allocations, strict=True):
        if claim.allocation is None:
            cluster.set_allocation(claim.ref, allocation)
    outcomes = plugins[node].preparer.prepare([c.ref for c in claims])
    allocated = tuple(claim_from_api(_stored(cluster, c)) for c in claims)
    return PodResult(pod, node, allocated, None, outcomes)


def _claim_for(pod: SimPod, entry: PodClaim, cluster: MemoryCluster) -> ResourceClaim:
    if entry.claim is not None:
        found = cluster.get("ResourceClaim", entry.claim, pod.namespace)
        if found is None:
            raise LookupError(f"{pod.namespace}/{entry.claim}")
        return claim_from_api(found)
    template = cluster.get("ResourceClaimTemplate", entry.template or "", pod.namespace)
    if template is None:
        raise LookupError(f"template {pod.namespace}/{entry.template}")
    return claim_from_api(cluster.create(_generated_claim(pod, entry, template)))


def _generated_claim(pod: SimPod, entry: PodClaim, template: Mapping[str, Any]) -> dict[str, Any]:
    """What the resourceclaim controller creates for a pod's template reference."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "generateName": f"{pod.name}-{entry.name}-",
            "namespace": pod.namespace,
            "annotations": {"resource.kubernetes.io/pod-claim-name": entry.name},
        },
        "spec": template["spec"]["spec"],
    }


def _place(
    claims: Sequence[ResourceClaim],
    cluster: MemoryCluster,
    classes: Mapping[DeviceClassName, DeviceClass],
    plugins: Mapping[NodeName, NodePlugin],
    evaluator: SelectorEvaluator,
) -> tuple[NodeName, list[Allocation]] | str:
    """The first node (by name) where every claim is already allocated or fits."""
    reasons = []
    for node in sorted(plugins):
        allocations: list[Allocation] = []
        busy = _in_use(cluster)
        for claim in claims:
            result = _allocation_on(
                node, claim, busy, cluster=cluster, classes=classes, evaluator=evaluator
            )
            if isinstance(result, Unsatisfiable):
                reasons.append(f"{node}: claim {claim.ref.name}: {result.reason}")
                break
            allocations.append(result)
            busy |= {(r.driver, r.pool, r.device) for r in result.results if not r.admin_access}
        else:
            return node, allocations
    return "; ".join(reasons) or "no nodes"


def _allocation_on(
    node: NodeName,
    claim: ResourceClaim,
    busy: frozenset[DeviceKey],
    *,
    cluster: MemoryCluster,
    classes: Mapping[DeviceClassName, DeviceClass],
    evaluator: SelectorEvaluator,
) -> Allocation | Unsatisfiable:
    if claim.allocation is not None:
        ok = claim.allocation.node_name in (None, node)
        return (
            claim.allocation if ok else Unsatisfiable(f"allocated on {claim.allocation.node_name}")
        )
    slices = cluster.list_slices(node=node)
    return allocate(claim, slices=slices, classes=classes, in_use=busy, evaluator=evaluator)


def _in_use(cluster: MemoryCluster) -> frozenset[DeviceKey]:
    claims = (claim_from_api(o) for o in cluster.list("ResourceClaim"))
    return frozenset(
        (r.driver, r.pool, r.device)
        for c in claims
        if c.allocation is not None
        for r in c.allocation.results
        if not r.admin_access
    )


def _stored(cluster: MemoryCluster, claim: ResourceClaim) -> dict[str, Any]:
    found = cluster.get("ResourceClaim", claim.ref.name, claim.ref.namespace)
    assert found is not None  # created by this run, never deleted
    return found
