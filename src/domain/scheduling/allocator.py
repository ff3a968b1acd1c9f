"""kube-scheduler's DRA allocator for one node, ported from
k8s.io/dynamic-resource-allocation/structured v0.34.3, the "incubating" variant: the one a
v1.34 kube-scheduler picks with its default feature gates (DRAPrioritizedList and DRAAdminAccess
beta and on; DRADeviceTaints, DRAPartitionableDevices, DRAConsumableCapacity alpha and off), plus
the "experimental" variant's shared counters (DRAPartitionableDevices on) where slices have them.

All unallocated claims of a pod are allocated together: claims in pod order, requests in claim
order, each request's devices one at a time over pools and slices in order; the first complete
solution wins, and a dead end backtracks from the innermost choice (so an earlier claim gives
up a device a later one needs). `firstAvailable` tries subrequests in order. A CEL runtime
error, an invalid pool, a constraint that an `All` request cannot meet or more than 32 devices
per claim are errors for the pod, never "does not fit here": the scheduler aborts the pod's
scheduling cycle with them. Its quirks are kept where they change a result (see `_one`).

The scheduler's only limit on the search is time (DRASchedulerFilterTimeout, 10 s per node);
this port counts steps instead and says so when it runs out, rather than guess.
"""

from collections.abc import Callable, Mapping, Sequence

import attrs

from npu_dra.domain.claims import (
    Allocation,
    AllocationMode,
    AllocationResult,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaim,
)
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DeviceClassName, NodeName, RequestName
from npu_dra.domain.scheduling.constraints import MatchAttribute
from npu_dra.domain.scheduling.counters import CounterBook, counter_book
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.pools import Candidate, DeviceKey, Pool

MAX_RESULTS = 32  # resourceapi.AllocationResultsMaxSize
DEFAULT_STEP_BUDGET = 200_000


class AllocationError(DomainError):
    """What the scheduler's Filter returns as an error: the pod stays unschedulable with it."""


class SearchBudgetExceeded(DomainError):
    """The search ran past its step budget; the scheduler might still have found a solution."""


class _MaxSize(Exception):
    """errAllocationResultMaxSizeExceeded: backtrack harder (internal to the search)."""


@attrs.frozen
class _Request:
    """requestData: one request, or one subrequest of a firstAvailable request."""

    base: str  # the request's name
    sub: str  # the subrequest's name, "" for a plain request
    device_class: DeviceClass
    selectors: tuple[str, ...]
    all_mode: bool
    admin: bool
    num_devices: int
    all_devices: tuple[Candidate, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.base}/{self.sub}" if self.sub else self.base

    @property
    def own_name(self) -> str:
        return self.sub or self.base


def allocate_claims(
    claims: Sequence[ResourceClaim],
    *,
    node: NodeName,
    pools: Sequence[Pool],
    classes: Mapping[DeviceClassName, DeviceClass],
    allocated: frozenset[DeviceKey] | set[DeviceKey],
    matcher: Matcher,
    budget: int = DEFAULT_STEP_BUDGET,
    partitionable: bool = True,
) -> tuple[Allocation, ...] | None:
    """One allocation per claim, or None when they do not fit on this node together.
    Raises AllocationError (fatal for the pod) and SearchBudgetExceeded.

    `partitionable` is DRAPartitionableDevices: on, a device consuming counters is taken only
    while its slice's counters last (see counters.py); off, such a device is never taken."""
    search = _Search(
        tuple(claims),
        tuple(pools),
        classes,
        allocated,
        matcher,
        budget,
        partitionable,
        counter_book(pools, allocated),
    )
    search.validate()
    if not search.one(0, 0, 0, 0, in_sub=False):
        return None
    return tuple(
        Allocation(
            tuple(
                AllocationResult(RequestName(r.name), c.driver, c.pool, c.device.name, r.admin)
                for r, c in results
            ),
            node,
        )
        for results in search.results
    )


def _kobj(claim: ResourceClaim) -> str:
    return f"{claim.ref.namespace}/{claim.ref.name}"


@attrs.define
class _Search:
    claims: tuple[ResourceClaim, ...]
    pools: tuple[Pool, ...]
    classes: Mapping[DeviceClassName, DeviceClass]
    allocated: frozenset[DeviceKey] | set[DeviceKey]
    matcher: Matcher
    budget: int
    partitionable: bool
    book: CounterBook
    steps: int = 0
    data: dict[tuple[int, int, int], _Request] = attrs.Factory(dict)
    subrequests: set[tuple[int, int]] = attrs.Factory(set)
    constraints: list[list[MatchAttribute]] = attrs.Factory(list)
    allocating: dict[DeviceKey, set[int]] = attrs.Factory(dict)
    results: list[list[tuple[_Request, Candidate]]] = attrs.Factory(list)
    cache: dict[tuple[int, int, int, DeviceKey], bool] = attrs.Factory(dict)

    # --- set-up, as Allocate() before its first allocateOne --------------------------------
    def validate(self) -> None:
        for ci, claim in enumerate(self.claims):
            minimum = 0
            for ri, request in enumerate(claim.spec.requests):
                if request.first_available:
                    self.subrequests.add((ci, ri))
                    counts: list[int] = []
                    for si, sub in enumerate(request.first_available):
                        # Allocate() validates subrequest i under the index of i-1 (its key is
                        # updated after the call), which only matters for the match cache.
                        data = self._request_data(ci, sub, request, (ci, ri, max(si - 1, 0)))
                        self.data[(ci, ri, si)] = data
                        counts.append(data.num_devices)
                    minimum += min(counts)
                else:
                    data = self._request_data(ci, request, None, (ci, ri, 0))
                    self.data[(ci, ri, 0)] = data
                    minimum += data.num_devices
            if minimum > MAX_RESULTS:
                raise AllocationError(
                    f"claim {_kobj(claim)}: number of requested devices {minimum} exceeds the "
                    f"claim limit of {MAX_RESULTS}"
                )
            self.constraints.append(
                [
                    MatchAttribute(c.match_attribute, frozenset(c.requests))
                    for c in claim.spec.constraints
                ]
            )
            self.results.append([])

    def _request_data(
        self,
        ci: int,
        request: DeviceRequest | DeviceSubRequest,
        parent: DeviceRequest | None,
        cache_key: tuple[int, int, int],
    ) -> _Request:
        claim = self.claims[ci]
        device_class = self.classes.get(request.device_class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {request.name}: could not retrieve device class "
                f'{request.device_class_name}: deviceclass.resource.k8s.io "'
                f'{request.device_class_name}" not found'
            )
        all_mode = request.allocation_mode is AllocationMode.ALL
        data = _Request(
            base=parent.name if parent else request.name,
            sub=request.name if parent else "",
            device_class=device_class,
            selectors=request.selectors,
            all_mode=all_mode,
            admin=isinstance(request, DeviceRequest) and request.admin_access,
            num_devices=0 if all_mode else request.count,
        )
        if not all_mode:
            return data
        found: list[Candidate] = []
        for pool in self.pools:
            what = f"claim {_kobj(claim)}, request {request.name}: asks for all devices, but"
            if pool.incomplete:
                raise AllocationError(
                    f"{what} resource pool {pool.label} is currently being updated"
                )
            if pool.invalid:
                raise AllocationError(f"{what} resource pool {pool.label} is currently invalid")
            found += (c for c in pool.devices if self._selectable(cache_key, data, c))
        return attrs.evolve(data, num_devices=len(found), all_devices=tuple(found))

    # --- the search: allocateOne ------------------------------------------------------------
    def one(self, ci: int, ri: int, si: int, di: int, *, in_sub: bool) -> bool:
        self._count_step()
        if ci >= len(self.claims) or ri >= len(self.claims[ci].spec.requests):
            return self._next_claim(ci)
        if not in_sub and (ci, ri) in self.subrequests:
            return self._first_available(ci, ri, di)
        data = self.data[(ci, ri, si)]
        if data.all_mode and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self.one(ci, ri + 1, 0, 0, in_sub=False)
        if len(self.results[ci]) + data.num_devices - di > MAX_RESULTS:
            raise _MaxSize
        if data.all_mode:
            return self._all_device(ci, ri, di, data, in_sub=in_sub)
        return self._some_device(ci, ri, si, di, data, in_sub=in_sub)

    def _count_step(self) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise SearchBudgetExceeded(
                f"gave up after {self.budget} search steps; kube-scheduler searches for up to "
                "10 s per node (DRASchedulerFilterTimeout) and may find an allocation or time out"
            )

    def _next_claim(self, ci: int) -> bool:
        """Past the last request of claim `ci`: on to the next claim, or done after the last."""
        if ci >= len(self.claims):
            return True
        try:
            return self.one(ci + 1, 0, 0, 0, in_sub=False)
        except _MaxSize:
            return False

    def _all_device(self, ci: int, ri: int, di: int, data: _Request, *, in_sub: bool) -> bool:
        undo = self._take(ci, data, data.all_devices[di], must=True)
        if undo is None:
            return False
        # The scheduler continues an `All` request without its subrequest index, i.e. with
        # subrequest 0's data (v0.34.3); kept, since it decides how many devices follow.
        return self._then(undo, lambda: self.one(ci, ri, 0, di + 1, in_sub=in_sub))

    def _some_device(
        self, ci: int, ri: int, si: int, di: int, data: _Request, *, in_sub: bool
    ) -> bool:
        for pool in self.pools:
            if pool.invalid:
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid}")
            for candidate in pool.devices:
                if not self._free_for(ci, data, candidate.key):
                    continue
                if not self._selectable((ci, ri, si), data, candidate):
                    continue
                undo = self._take(ci, data, candidate, must=False)
                if undo is None:
                    continue
                if self._then(undo, lambda: self.one(ci, ri, si, di + 1, in_sub=in_sub)):
                    return True
        return False

    def _first_available(self, ci: int, ri: int, di: int) -> bool:
        all_exceeded = True
        si = 0
        while (ci, ri, si) in self.data:
            try:
                success = self.one(ci, ri, si, di, in_sub=True)
            except _MaxSize:
                si += 1
                continue
            all_exceeded = False
            if success:
                return True
            si += 1
        if all_exceeded:
            raise _MaxSize
        return False

    @staticmethod
    def _then(undo: Callable[[], None], rest: Callable[[], bool]) -> bool:
        try:
            done = rest()
        except BaseException:
            undo()
            raise
        if not done:
            undo()
        return done

    def _free_for(self, ci: int, data: _Request, key: DeviceKey) -> bool:
        if data.admin:
            return ci not in self.allocating.get(key, ())
        return key not in self.allocated and not self.allocating.get(key)

    def _selectable(self, key: tuple[int, int, int], data: _Request, candidate: Candidate) -> bool:
        cached = self.cache.get((*key, candidate.key))
        if cached is None:
            cached = self._selectors_match(key[0], data, candidate)
            self.cache[(*key, candidate.key)] = cached
        return cached

    def _selectors_match(self, ci: int, data: _Request, candidate: Candidate) -> bool:
        owner = f"class {data.device_class.name}"
        for selectors in (data.device_class.selectors, data.selectors):
            for i, expression in enumerate(selectors):
                outcome = self.matcher.outcome(expression, candidate)
                if isinstance(outcome, str):
                    raise AllocationError(f"{owner}: selector #{i}: CEL runtime error: {outcome}")
                if not outcome:
                    return False
            owner = f"claim {_kobj(self.claims[ci])}"
        return True

    def _take(
        self, ci: int, data: _Request, candidate: Candidate, *, must: bool
    ) -> Callable[[], None] | None:
        """allocateDevice: the device if it is free and meets the claim's constraints."""
        if not self._free_for(ci, data, candidate.key):
            return None
        counted = bool(candidate.device.consumes_counters)
        if counted and (not self.partitionable or not self.book.take(candidate)):
            return None  # as allocateDevice: no error, even for an `All` request
        constraints = self.constraints[ci]
        for i, constraint in enumerate(constraints):
            if not constraint.add(data.base, data.sub, candidate):
                if counted:
                    self.book.give_back(candidate)
                if must:
                    key = "/".join(candidate.key)
                    raise AllocationError(
                        f"claim {_kobj(self.claims[ci])}, request {data.own_name}: cannot add "
                        f"device {key} because a claim constraint would not be satisfied"
                    )
                for earlier in constraints[:i]:
                    earlier.remove(data.base, data.sub)
                return None
        self.allocating.setdefault(candidate.key, set()).add(ci)
        self.results[ci].append((data, candidate))

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(data.base, data.sub)
            self.allocating[candidate.key].discard(ci)
            self.results[ci].pop()
            if counted:
                self.book.give_back(candidate)

        return undo
