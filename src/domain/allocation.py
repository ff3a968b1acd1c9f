"""A small structured-parameters allocator, for the offline simulation.

It follows the scheduler's rules that matter for the seed's flow: class selectors AND request
selectors must all match; ExactCount takes `count` free devices, All takes every matching device
and fails if any is in use; all of a claim's devices come from one node; `matchAttribute`
constraints keep devices on one attribute value; a device is never given to two claims unless
the request asks for admin access. Nodes and devices are tried in name order, so results are
deterministic. Production allocation is the real kube-scheduler's job.
"""

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from npu_dra.domain.attributes import AttributeValue
from npu_dra.domain.claims import (
    Allocation,
    AllocationMode,
    AllocationResult,
    Constraint,
    DeviceClass,
    DeviceRequest,
    ResourceClaim,
)
from npu_dra.domain.errors import SelectorError
from npu_dra.domain.ids import DeviceClassName, DeviceName, DriverName, NodeName, PoolName
from npu_dra.domain.pool import PublishedDevice, ResourceSlice
from npu_dra.domain.ports import SelectorEvaluator
from npu_dra.domain.selectors import selector_view

DeviceKey = tuple[DriverName, PoolName, DeviceName]


@attrs.frozen
class Candidate:
    driver: DriverName
    pool: PoolName
    device: PublishedDevice

    @property
    def key(self) -> DeviceKey:
        return (self.driver, self.pool, self.device.name)


@attrs.frozen
class Unsatisfiable:
    reason: str


class _NoFit(Exception):
    pass


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
        except _NoFit as why:
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
    last = _NoFit("no device has the constrained attribute")
    for pinned in _attribute_choices(claim, matching):
        try:
            return _fit_requests(claim.spec.requests, matching, in_use, pinned)
        except _NoFit as why:
            last = why
    raise last


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


Pin = Callable[[str, Candidate], bool]


def _attribute_choices(
    claim: ResourceClaim, matching: Mapping[str, list[Candidate]]
) -> Iterable[Pin]:
    """One pin per combination of the constraints' attribute values, every constraint held;
    no constraint means one pin that accepts all."""
    choices = [[(c, v) for v in _values(c, matching)] for c in claim.spec.constraints]
    for choice in itertools.product(*choices):
        yield _pin(choice)


def _values(constraint: Constraint, matching: Mapping[str, list[Candidate]]) -> list[str]:
    scope = set(constraint.requests or matching)
    return sorted(
        {
            str(v)
            for r in scope
            for c in matching.get(r, [])
            if (v := _attribute(c, constraint.match_attribute)) is not None
        }
    )


def _pin(choice: tuple[tuple[Constraint, str], ...]) -> Pin:
    def accept(request: str, candidate: Candidate) -> bool:
        return all(
            bool(constraint.requests and request not in constraint.requests)
            or str(_attribute(candidate, constraint.match_attribute)) == value
            for constraint, value in choice
        )

    return accept


def _attribute(candidate: Candidate, name: str) -> AttributeValue | None:
    domain, _, identifier = name.rpartition("/")
    if domain == candidate.driver:
        return candidate.device.attributes.get(identifier, candidate.device.attributes.get(name))
    return candidate.device.attributes.get(name)


def _fit_requests(
    requests: Sequence[DeviceRequest],
    matching: Mapping[str, list[Candidate]],
    in_use: frozenset[DeviceKey],
    pin: Pin,
) -> tuple[AllocationResult, ...]:
    taken: set[DeviceKey] = set()
    results: list[AllocationResult] = []
    for request in requests:
        candidates = matching[request.name]
        pool = [c for c in candidates if pin(request.name, c)]
        if request.allocation_mode is AllocationMode.ALL and len(pool) < len(candidates):
            raise _NoFit(
                f"request {request.name!r}: matching devices differ in a constrained attribute"
            )
        chosen = _choose(request, pool, in_use | taken)
        taken.update(c.key for c in chosen if not request.admin_access)
        results += [
            AllocationResult(request.name, c.driver, c.pool, c.device.name, request.admin_access)
            for c in chosen
        ]
    return tuple(results)


def _choose(
    request: DeviceRequest, pool: list[Candidate], busy: set[DeviceKey] | frozenset[DeviceKey]
) -> list[Candidate]:
    free = pool if request.admin_access else [c for c in pool if c.key not in busy]
    if request.allocation_mode is AllocationMode.ALL:
        if not pool:
            raise _NoFit(f"request {request.name!r}: no device matches")
        if len(free) < len(pool):
            raise _NoFit(
                f"request {request.name!r}: {len(pool) - len(free)} matching device(s) in use"
            )
        return free
    if len(free) < request.count:
        raise _NoFit(
            f"request {request.name!r}: needs {request.count}, "
            f"{len(free)} free of {len(pool)} matching"
        )
    return free[: request.count]
