"""Runs a scenario: every node publishes its pool, claims are created (templates become claims
as the resourceclaim controller would do), and pods are scheduled one at a time in creation
order the way kube-scheduler v1.34 would (`pod_decision.py`, `schedule.py`); a bound pod's node
plugin then prepares its claims exactly as for NodePrepareResources.
"""

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import attrs

from npu_dra.adapters.kube_shapes.claims import claim_from_api, device_class_from_api
from npu_dra.adapters.kube_shapes.slices import slice_from_api
from npu_dra.adapters.simulation_files.scenario import Refusal, Scenario, SimPod
from npu_dra.app.simulation.api_objects import ApiObjects
from npu_dra.app.simulation.held import cdi_specs, held_before
from npu_dra.app.simulation.node_plugins import NodePlugin
from npu_dra.app.simulation.pod_decision import PodResult, pod_runner
from npu_dra.app.simulation.retries import retried
from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import ClaimUID, NodeName
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.scheduling.allocator import DEFAULT_STEP_BUDGET
from npu_dra.domain.scheduling.bound_pods import BoundPods
from npu_dra.domain.scheduling.explain import NodeReason, Outcome
from npu_dra.domain.scheduling.explain import explain as why_pending
from npu_dra.domain.scheduling.index import ClusterIndex
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.ports import SelectorEvaluator
from npu_dra.domain.scheduling.taint_rules import (
    DeviceTaintRule,
    rules_served,
    with_taint_rules,
)
from npu_dra.domain.scheduling.versions import SchedulerVersion, scheduler_version


@attrs.frozen
class SimulationResult:
    slices: tuple[dict[str, Any], ...]
    pods: tuple[PodResult, ...]
    specs: Mapping[ClaimUID, CdiSpec]
    inventories: tuple[NodeInventory, ...] = ()
    # (driver, pool, device) -> "namespace/claim": held by claims allocated before the run
    held_before: Mapping[tuple[str, str, str], str] = attrs.field(factory=dict)
    refused: tuple[Refusal, ...] = ()  # the scenario's objects the API server would refuse
    version: SchedulerVersion | None = None  # what it decided as
    taint_rules: tuple[DeviceTaintRule, ...] = ()  # the DeviceTaintRules the version served
    warnings: tuple[str, ...] = ()  # what the run left out or assumed, as stderr says it


def simulate(
    scenario: Scenario,
    *,
    cluster: ApiObjects,
    plugins: Sequence[NodePlugin],
    evaluator: SelectorEvaluator,
    prepare: bool = True,
    budget: int = DEFAULT_STEP_BUDGET,
    on_pod: Callable[[int], None] | None = None,
    explain: bool = False,
    version: SchedulerVersion | None = None,
) -> SimulationResult:
    """What each node publishes, then each pod's decision and, once bound, its preparation, as
    `version` (default: v1.34.3, default gates) decides; `on_pod` hears each pod done."""
    version = version or scheduler_version()
    rules = scenario.taint_rules if rules_served(version) else ()
    published = with_taint_rules(_publish(scenario, cluster, plugins), rules)
    index = _cluster_index(scenario, published, consumable=version.on("DRAConsumableCapacity"))
    classes = {c.name: c for c in map(device_class_from_api, scenario.device_classes)}
    matcher = Matcher(evaluator)
    runner = pod_runner(scenario, version, budget)
    run_pod = partial(runner, cluster=cluster, index=index, classes=classes, matcher=matcher)
    asked = Outcome(budget=budget, device_taints=version.allocator.device_taints)
    why = partial(_why, index=index, classes=classes, matcher=matcher, asked=asked)
    by_node = {p.name: p for p in plugins} if prepare else {}
    decide = partial(_decide, run_pod=run_pod, why=why if explain else None, prepare_on=by_node)
    results: list[PodResult] = []
    for pod in scenario.pods:
        results.append(decide(pod))
        if on_pod is not None:
            on_pod(len(results))
    results = retried(results, decide, index.pods.namespaces)
    found = tuple(p.inventory.current() for p in plugins if p.inventory is not None)
    slices, specs = tuple(cluster.list("ResourceSlice")), cdi_specs(plugins)
    held = held_before(scenario)
    return SimulationResult(
        slices, tuple(results), specs, found, held, scenario.refused, version, rules
    )


def _decide(
    pod: SimPod,
    *,
    run_pod: Callable[[SimPod], PodResult],
    why: Callable[[PodResult], tuple[NodeReason, ...]] | None,  # --explain
    prepare_on: Mapping[NodeName, NodePlugin],  # the nodes that prepare a bound pod's claims
) -> PodResult:
    result = run_pod(pod)
    if why is not None and result.status in ("Pending", "Undecided"):
        result = attrs.evolve(result, explanation=why(result))
    if result.node is not None and result.node in prepare_on:
        result = _prepared(result, prepare_on[result.node])
    return result


def _why(
    result: PodResult,
    index: ClusterIndex,
    classes: Mapping[Any, Any],
    matcher: Matcher,
    asked: Outcome,  # the step budget and the rules the pods were decided with
) -> tuple[NodeReason, ...]:
    """--explain for a pod left pending or undecided."""
    undecided, reason = frozenset(result.undecided), result.reason
    outcome = attrs.evolve(asked, reason=reason, undecided=undecided, kept_out=result.kept_out)
    placement, claims = result.pod.placement, result.claims
    return why_pending(
        placement, claims, index=index, classes=classes, matcher=matcher, outcome=outcome
    )


def _prepared(result: PodResult, plugin: NodePlugin) -> PodResult:
    """The bound pod's claims prepared by its node's plugin, as for NodePrepareResources."""
    outcomes = plugin.services.preparer.prepare([c.ref for c in result.claims])
    return attrs.evolve(result, outcomes=outcomes)


def _publish(
    scenario: Scenario, cluster: ApiObjects, plugins: Sequence[NodePlugin]
) -> list[ResourceSlice]:
    """Every node and its slices, then the scenario's classes, claims and templates."""
    published: list[ResourceSlice] = []
    for plugin in plugins:
        cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": plugin.name}})
        published += plugin.publisher.publish()
    for obj in scenario.slices:  # a snapshot's, of any driver, as published
        published.append(slice_from_api(cluster.create(obj)))
    for obj in (*scenario.device_classes, *scenario.claims, *scenario.templates):
        cluster.create(obj)
    return published


def _cluster_index(
    scenario: Scenario, published: Sequence[ResourceSlice], *, consumable: bool
) -> ClusterIndex:
    """The nodes and their devices, less what the scenario's claims already hold (devices
    whole, or shares of their capacity: index.py)."""
    index = ClusterIndex(scenario.sched_nodes, published)
    index.mark_allocated(
        (
            r
            for c in map(claim_from_api, scenario.claims)
            if c.allocation is not None
            for r in c.allocation.results
        ),
        consumable=consumable,
    )
    index.pods = BoundPods(scenario.namespaces)
    for name, node in scenario.bound:  # a snapshot's bound pods: the nodes' load, as scored
        if node in index.nodes:
            index.bind(node, (), pod=scenario.bound_terms.get(name))
    return index
