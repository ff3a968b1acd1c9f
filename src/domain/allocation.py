"""A small structured-parameters allocator, for the offline simulation.

It follows the scheduler's rules that matter for the seed's flow: class selectors AND request
selectors must all match; ExactCount takes `count` free devices, All takes every matching device
and fails if any is in use; all of a claim's devices come from one node; `matchAttribute`
constraints keep devices on one attribute value; a device is never given to two claims unless
the request asks for admin access. Nodes are tried in name order and devices in slice order,
with backtracking across requests (allocation_search.py), so results are deterministic.
`firstAvailable` is refused when a scenario is read. Production allocation is the real
kube-scheduler's job.
"""

from collections.abc import Iterable, Mapping, Sequence

import attrs

from npu_dra.domain.allocation_search import Candidate, DeviceKey, NoFit, search
from npu_dra.domain.claims import (
    Allocation,
    AllocationResult,
    DeviceClass,
    DeviceRequest,
    ResourceClaim,
)
from npu_dra.domain.errors import SelectorError
from npu_dra.domain.ids import DeviceClassName, DriverName, NodeName, PoolName
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.ports import SelectorEvaluator
from npu_dra.domain.selectors import selector_view

__all__ = ["Allocation", "Candidate", "DeviceKey", "Unsatisfiable", "allocate"]


@attrs.frozen
class Unsatisfiable:
    reason: str


def allocate(
    claim: ResourceClaim,
    *,
    slices: Sequence[ResourceSlice],
    classes: Mapping[DeviceClassName, DeviceClass],
    in_use: frozenset[DeviceKey],
    evaluator: SelectorEvaluator,
) -> Allocation | Unsatisfiable:
    missing = sorted({r.device_class_name for r in claim.spec.requests} - set(classes))
    if missing:
        return Unsatisfiable(f"device class {missing[0]!r} does not exist")
    reasons: list[str] = []
    for node, candidates in sorted(_by_node(_current(slices)).items()):
        try:
            results = _fit_node(claim, candidates, classes, in_use, evaluator)
        except NoFit as why:
            reasons.append(f"{node}: {why}")
            continue
        except SelectorError as error:
            return Unsatisfiable(str(error))
        return Allocation(tuple(results), node)
    return Unsatisfiable("; ".join(reasons) or "no ResourceSlices published")


def _current(slices: Sequence[ResourceSlice]) -> list[ResourceSlice]:
    newest: dict[tuple[DriverName, PoolName], int] = {}
    for s in slices:
        key = (s.driver, s.pool.name)
        newest[key] = max(newest.get(key, -1), s.pool.generation)
    return [s for s in slices if s.pool.generation == newest[(s.driver, s.pool.name)]]


def _by_node(slices: Iterable[ResourceSlice]) -> dict[NodeName, list[Candidate]]:
    nodes: dict[NodeName, list[Candidate]] = {}
    for s in sorted(slices, key=lambda s: (s.name or "", s.pool.name)):
        nodes.setdefault(s.node_name, []).extend(
            Candidate(s.driver, s.pool.name, d) for d in s.devices
        )
    return nodes


def _fit_node(
    claim: ResourceClaim,
    candidates: list[Candidate],
    classes: Mapping[DeviceClassName, DeviceClass],
    in_use: frozenset[DeviceKey],
    evaluator: SelectorEvaluator,
) -> tuple[AllocationResult, ...]:
    matching: dict[str, list[Candidate]] = {
        r.name: [c for c in candidates if _matches(c, classes[r.device_class_name], r, evaluator)]
        for r in claim.spec.requests
    }
    chosen = search(claim.spec.requests, matching, claim.spec.constraints, in_use)
    return tuple(
        AllocationResult(r.name, c.driver, c.pool, c.device.name, r.admin_access) for r, c in chosen
    )


def _matches(
    candidate: Candidate,
    device_class: DeviceClass,
    request: DeviceRequest,
    evaluator: SelectorEvaluator,
) -> bool:
    view = selector_view(candidate.device, candidate.driver)
    return all(
        evaluator.matches(expression=e, device=view)
        for e in (*device_class.selectors, *request.selectors)
    )
