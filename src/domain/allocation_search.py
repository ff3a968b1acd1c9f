"""The depth-first search behind the offline allocator, shaped like the scheduler's: requests
in order, devices in slice order, each matchAttribute constraint pinned by the first device
chosen in its scope and checked for every later one, and backtracking from the innermost choice.
So an earlier request never keeps a device a later one needed when another choice fits both.
The search is bounded; running out of steps is reported, never guessed around.
"""

from collections.abc import Mapping, Sequence

import attrs

from npu_dra.domain.attributes import AttributeValue
from npu_dra.domain.claims import AllocationMode, Constraint, DeviceRequest
from npu_dra.domain.ids import DeviceName, DriverName, PoolName
from npu_dra.domain.pool import PublishedDevice

DeviceKey = tuple[DriverName, PoolName, DeviceName]
MAX_STEPS = 100_000
Pinned = tuple[type, AttributeValue]  # the type too: True and 1 are different attribute values


@attrs.frozen
class Candidate:
    driver: DriverName
    pool: PoolName
    device: PublishedDevice

    @property
    def key(self) -> DeviceKey:
        return (self.driver, self.pool, self.device.name)


class NoFit(Exception):
    """The claim does not fit on this node; the message says which request and why."""


def attribute_of(candidate: Candidate, name: str) -> AttributeValue | None:
    domain, _, identifier = name.rpartition("/")
    attributes = candidate.device.attributes
    if domain == candidate.driver:
        return attributes.get(identifier, attributes.get(name))
    return attributes.get(name)


def search(
    requests: Sequence[DeviceRequest],
    matching: Mapping[str, list[Candidate]],
    constraints: Sequence[Constraint],
    in_use: frozenset[DeviceKey],
) -> list[tuple[DeviceRequest, Candidate]]:
    for request in requests:
        _precheck(request, matching[request.name], constraints, in_use)
    slots = [
        (request, k)
        for request in requests
        for k in range(_wanted(request, matching[request.name]))
    ]
    state = _Search(matching, tuple(constraints), set(in_use))
    if state.fill(slots, 0, 0):
        return state.chosen
    if state.steps > MAX_STEPS:
        raise NoFit(f"gave up after {MAX_STEPS} steps looking for a combination")
    request = slots[min(state.deepest, len(slots) - 1)][0]
    raise NoFit(
        f"request {request.name!r}: needs {_wanted(request, matching[request.name])}; no "
        "combination of free matching devices satisfies every request and constraint"
    )


def _wanted(request: DeviceRequest, pool: list[Candidate]) -> int:
    return len(pool) if request.allocation_mode is AllocationMode.ALL else request.count


def _applies(constraint: Constraint, request: DeviceRequest) -> bool:
    return not constraint.requests or request.name in constraint.requests


def _precheck(
    request: DeviceRequest,
    pool: list[Candidate],
    constraints: Sequence[Constraint],
    in_use: frozenset[DeviceKey],
) -> None:
    """The reasons a person can act on, found before searching."""
    name = request.name
    free = pool if request.admin_access else [c for c in pool if c.key not in in_use]
    if request.allocation_mode is AllocationMode.ALL:
        if not pool:
            raise NoFit(f"request {name!r}: no device matches")
        if len(free) < len(pool):
            raise NoFit(f"request {name!r}: {len(pool) - len(free)} matching device(s) in use")
    elif len(free) < request.count:
        raise NoFit(
            f"request {name!r}: needs {request.count}, {len(free)} free of {len(pool)} matching"
        )
    for constraint in (c for c in constraints if _applies(c, request)):
        values = {_pinned(attribute_of(c, constraint.match_attribute)) for c in pool}
        if values == {None}:
            raise NoFit(f"request {name!r}: no device has the constrained attribute")
        if request.allocation_mode is AllocationMode.ALL and len(values) > 1:
            raise NoFit(f"request {name!r}: matching devices differ in a constrained attribute")


def _pinned(value: AttributeValue | None) -> Pinned | None:
    return None if value is None else (type(value), value)


@attrs.define
class _Search:
    matching: Mapping[str, list[Candidate]]
    constraints: tuple[Constraint, ...]
    busy: set[DeviceKey]
    chosen: list[tuple[DeviceRequest, Candidate]] = attrs.Factory(list)
    values: dict[int, Pinned] = attrs.Factory(dict)
    pins: list[list[int]] = attrs.Factory(list)  # constraints each chosen device pinned
    steps: int = 0
    deepest: int = 0

    def fill(self, slots: list[tuple[DeviceRequest, int]], i: int, start: int) -> bool:
        if i == len(slots):
            return True
        self.deepest = max(self.deepest, i)
        request, k = slots[i]
        pool = self.matching[request.name]
        first = 0 if k == 0 else start
        options = [k] if request.allocation_mode is AllocationMode.ALL else range(first, len(pool))
        for index in options:
            self.steps += 1
            if self.steps > MAX_STEPS:
                return False
            if self._take(request, pool[index]):
                if self.fill(slots, i + 1, index + 1):
                    return True
                self._drop()
        return False

    def _take(self, request: DeviceRequest, candidate: Candidate) -> bool:
        if not request.admin_access and candidate.key in self.busy:
            return False
        pinned: list[int] = []
        for index, constraint in enumerate(self.constraints):
            if not _applies(constraint, request):
                continue
            value = _pinned(attribute_of(candidate, constraint.match_attribute))
            if value is None or self.values.get(index, value) != value:
                for undo in pinned:
                    del self.values[undo]
                return False
            if index not in self.values:
                self.values[index] = value
                pinned.append(index)
        self.chosen.append((request, candidate))
        self.pins.append(pinned)
        if not request.admin_access:
            self.busy.add(candidate.key)
        return True

    def _drop(self) -> None:
        request, candidate = self.chosen.pop()
        for index in self.pins.pop():
            del self.values[index]
        if not request.admin_access:
            self.busy.discard(candidate.key)
