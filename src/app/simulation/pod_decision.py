"""One pod decided as kube-scheduler would: its scheduling gates, its claims (a template's made,
an extended resource a DeviceClass maps given a special claim), `schedule.py`'s decision and, where
it found a node, the claims' allocations written and the node's load taken. `run.py` runs each pod
through it in creation order.
"""

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import attrs

from npu_dra.adapters.kube_shapes.claims import claim_from_api
from npu_dra.adapters.simulation_files.scenario import Scenario, SimPod
from npu_dra.app.simulation.api_objects import ApiObjects
from npu_dra.app.simulation.pod_claims import claim_for
from npu_dra.domain.claims import AllocationResult, ResourceClaim
from npu_dra.domain.ids import ClaimUID, NodeName
from npu_dra.domain.prepare import ClaimOutcome
from npu_dra.domain.scheduling.explain import NodeReason
from npu_dra.domain.scheduling.extended import ExtendedRequest, class_mapping, special_claim
from npu_dra.domain.scheduling.index import ClusterIndex
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.pod_requests import is_extended
from npu_dra.domain.scheduling.schedule import Decision, schedule_pod
from npu_dra.domain.scheduling.versions import V134, SchedulerVersion


@attrs.frozen
class PodResult:
    pod: SimPod
    node: NodeName | None
    claims: tuple[ResourceClaim, ...]
    reason: str | None = None
    outcomes: Mapping[ClaimUID, ClaimOutcome] = attrs.field(factory=dict)
    status: str = "Bound"  # Bound, Pending, SchedulingGated, Error, Undecided
    # how many nodes the scheduler may pick: those tied for the best score, or (100 nodes or
    # more, where it scores only the feasible nodes it finds first) every node that fits
    fitting: int = 0
    # claim name -> devices, per other choice the scheduler may make on the same node (it walks
    # a node's pools and slices in random order)
    other_choices: tuple[Mapping[str, tuple[str, ...]], ...] = ()
    explanation: tuple[NodeReason, ...] = ()  # --explain: why it is pending, per node
    undecided: tuple[str, ...] = ()  # the nodes whose search ran out of its step budget
    kept_out: bool = False  # never before the nodes: a claim missing, an extended resource unmapped


def pod_runner(
    scenario: Scenario, version: SchedulerVersion, budget: int
) -> Callable[..., PodResult]:
    """_run_pod as `version` decides: its allocator rules; with DRAExtendedResource off, the API
    server drops a class's extendedResourceName, so no class maps an extended resource."""
    extended, v134 = version.on("DRAExtendedResource"), version.version == V134
    mapping = class_mapping(scenario.device_classes, both_names=not v134) if extended else {}
    rules, scoring = version.allocator, version.scoring
    schedule = partial(schedule_pod, budget=budget, rules=rules, scoring=scoring)
    # v1.34.3's DRA plugin serves only IsExtendedResourceName names (dynamicresources.go
    # filterExtendedResources); v1.36.3's implicit ones too (extendeddynamicresources.go)
    served = is_extended if v134 else (lambda _: True)
    return partial(_run_pod, mapping=mapping, served=served, schedule=schedule)


def _run_pod(
    pod: SimPod,
    cluster: ApiObjects,
    index: ClusterIndex,
    classes: Mapping[Any, Any],
    matcher: Matcher,
    *,
    mapping: Mapping[str, str],
    served: Callable[[str], bool],  # which mapped names DRA gives devices for
    schedule: Callable[..., Decision],  # schedule_pod, its budget and allocator given
) -> PodResult:
    if pod.gates:
        return PodResult(
            pod, None, (), f"gated by {', '.join(pod.gates)}", status="SchedulingGated"
        )
    pod, dynamic = _served_by_dra(pod, mapping, served)
    try:
        claims = [claim_for(pod, entry, cluster) for entry in pod.claims]
        if dynamic:
            special = special_claim(pod.name, pod.namespace, dynamic, mapping)
            claims.append(claim_from_api(cluster.create(special)))
    except LookupError as missing:
        reason = f"{missing.args[0]}: kept out of the scheduling queue (PreEnqueue)"
        return PodResult(pod, None, (), reason, status="Pending", kept_out=True)
    decision = schedule(pod.placement, claims, index=index, classes=classes, matcher=matcher)
    if decision.node is None:
        return PodResult(
            pod,
            None,
            tuple(claims),
            decision.reason,
            status=decision.status,
            undecided=decision.undecided,
        )
    return _bind(pod, claims, decision, cluster, index)


def _served_by_dra(
    pod: SimPod, mapping: Mapping[str, str], served: Callable[[str], bool]
) -> tuple[SimPod, tuple[ExtendedRequest, ...]]:
    """The pod with the extended resources a DeviceClass maps left out of NodeResourcesFit
    (fit.go `fitsRequest` skips them where the node does not advertise them), and the requests
    DRA gives devices for (the special claim); the others stay NodeResourcesFit's, against the
    node's allocatable (a classic device plugin's). Where a node does advertise a mapped name,
    the scheduler counts it there and not through DRA: simulate does not
    (docs/simulate-differences.md)."""
    names = frozenset(r.resource for r in pod.extended if r.resource in mapping)
    if not names:
        return pod, ()
    dynamic = tuple(r for r in pod.extended if r.resource in names and served(r.resource))
    requests = pod.placement.requests.without(names)
    return attrs.evolve(pod, placement=attrs.evolve(pod.placement, requests=requests)), dynamic


def _bind(
    pod: SimPod,
    claims: list[ResourceClaim],
    decision: Decision,
    cluster: ApiObjects,
    index: ClusterIndex,
) -> PodResult:
    assert decision.node is not None
    bound = []
    taken: list[AllocationResult] = []
    for claim, allocation in zip(claims, decision.allocations, strict=True):
        if claim.allocation is not None or allocation is None:
            bound.append(claim)
            continue
        cluster.set_allocation(claim.ref, allocation)
        bound.append(attrs.evolve(claim, allocation=allocation))
        taken += allocation.results
    index.bind(decision.node, taken, pod.placement.requests, pod.placement.pod)
    return PodResult(
        pod,
        NodeName(decision.node),
        tuple(bound),
        decision.reason,
        status="Bound",
        fitting=decision.fitting,
        other_choices=tuple(
            {
                claim.ref.name: tuple(r.device for r in allocation.results)
                for claim, allocation in zip(claims, choice, strict=True)
                if allocation is not None
            }
            for choice in decision.other_choices
        ),
    )
