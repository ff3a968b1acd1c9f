"""The allocator's checks on one candidate device for one request, and what taking it records
(k8s.io/dynamic-resource-allocation/structured v0.34.3: `isSelectable`, `selectorsMatch`,
`allocateDevice` and its deallocate closure; v0.36.3's `rollbackDevice` where it differs).

A device serves a request when it is free (admin access may share it, but not within one claim;
with DRAConsumableCapacity on a device with allowMultipleAllocations is never marked taken),
the device class's and the request's CEL selectors accept it, its slice's shared counters still
cover it, the request tolerates its taints (with DRADeviceTaints on), the claim's
`matchAttribute` constraints take it and, with DRAConsumableCapacity on, the capacity it asks is
left (shared_use.py). Apart from the search because
these are the per-device rules, while the search only decides the order of trying devices.
"""

from collections.abc import Callable, Mapping, Sequence

import attrs

from npu_dra.domain.claims import Constraint, ResourceClaim
from npu_dra.domain.device_tolerations import all_tolerated
from npu_dra.domain.scheduling.capacity import Amounts
from npu_dra.domain.scheduling.constraints import (
    DistinctAttribute,
    DistinctValues,
    MatchAttribute,
)
from npu_dra.domain.scheduling.counters import CounterBook, counter_book
from npu_dra.domain.scheduling.errors import AllocationError
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.pools import Candidate, DeviceKey, Pool
from npu_dra.domain.scheduling.request_data import RequestData, RequestIndex, claim_label
from npu_dra.domain.scheduling.rules import AllocatorRules
from npu_dra.domain.scheduling.shared_use import CapacityBook, SharedUse

Undo = Callable[[], None]


@attrs.frozen
class Taken:
    """A device taken for a request; `consumed`: a share's capacity (None: the device whole)."""

    data: RequestData
    candidate: Candidate
    consumed: Amounts | None = None


@attrs.define
class CandidateChecks:
    """The devices taken so far in one search, per claim, and the checks that add to them."""

    claims: tuple[ResourceClaim, ...]
    allocated: frozenset[DeviceKey] | set[DeviceKey]
    matcher: Matcher
    rules: AllocatorRules
    book: CounterBook
    capacity: CapacityBook
    constraints: list[list[MatchAttribute | DistinctAttribute | DistinctValues]]
    results: list[list[Taken]]
    # v1.34.3's bookkeeping (see _refused_after_counters); False gives the counters back
    keep_refused_counters: bool = True
    kept_counters: bool = False  # whether a refused partition kept its counters in this search
    allocating: dict[DeviceKey, set[int]] = attrs.Factory(dict)
    cache: dict[tuple[int, int, int, DeviceKey], bool] = attrs.Factory(dict)
    slices: Mapping[str, tuple[Candidate, ...]] = attrs.Factory(dict)  # by name, in order

    def free_for(self, ci: int, data: RequestData, key: DeviceKey) -> bool:
        if data.admin:
            return ci not in self.allocating.get(key, ())
        return key not in self.allocated and not self.allocating.get(key)

    def selectable(self, key: RequestIndex, data: RequestData, candidate: Candidate) -> bool:
        cached = self.cache.get((*key, candidate.key))
        if cached is None:
            cached = self._selectors_match(key[0], data, candidate)
            self.cache[(*key, candidate.key)] = cached
        return cached

    def _selectors_match(self, ci: int, data: RequestData, candidate: Candidate) -> bool:
        owner = f"class {data.device_class.name}"
        for selectors in (data.device_class.selectors, data.selectors):
            for i, expression in enumerate(selectors):
                outcome = self.matcher.outcome(expression, candidate)
                if isinstance(outcome, str):
                    raise AllocationError(f"{owner}: selector #{i}: CEL runtime error: {outcome}")
                if not outcome:
                    return False
            owner = f"claim {claim_label(self.claims[ci])}"
        return True

    def capacity_fits(self, data: RequestData, candidate: Candidate) -> bool:
        """CmpRequestOverCapacity, checked before allocateDevice (DRAConsumableCapacity on)."""
        return self.capacity.fits(candidate, data.requested)

    def take(
        self, ci: int, data: RequestData, candidate: Candidate, *, must: bool, index: int
    ) -> Undo | None:
        """allocateDevice: the device if it is free, tolerated, meets the claim's constraints
        and has the capacity asked left. No error where it does not, even for an `All` request,
        but for a constraint an `All` request's device fails. `index`: the device's among the
        request's."""
        consumes = bool(candidate.device.consumes_counters)
        if not self.free_for(ci, data, candidate.key) or (
            consumes and not self.rules.partitionable
        ):
            return None
        shared = self.rules.consumable and candidate.device.allow_multiple_allocations
        counted = self._counts(candidate, shared=shared)
        if counted and not self.book.take(candidate):
            return None
        if not self._tolerated(data, candidate) or not self._add_to_constraints(
            ci, data, candidate, must=must
        ):
            if counted:
                self._refused_after_counters(candidate)
            return None
        if self.rules.consumable and not self._capacity_left(data, candidate, index):
            self._refused_for_capacity(ci, data, candidate, counted=counted, shared=shared)
            return None
        if not shared:
            self.allocating.setdefault(candidate.key, set()).add(ci)
        taken = Taken(
            data, candidate, self.capacity.take(candidate, data.requested) if shared else None
        )
        self.results[ci].append(taken)
        return self._undo_take(ci, taken, counted=counted)

    def _tolerated(self, data: RequestData, candidate: Candidate) -> bool:
        return not self.rules.device_taints or all_tolerated(
            candidate.device.taints, data.tolerations
        )

    def _add_to_constraints(
        self, ci: int, data: RequestData, candidate: Candidate, *, must: bool
    ) -> bool:
        """The device added to each of the claim's constraints, or to none of them."""
        constraints = self.constraints[ci]
        for i, constraint in enumerate(constraints):
            if not constraint.add(data.base, data.sub, candidate):
                if must:
                    key = "/".join(candidate.key)
                    raise AllocationError(
                        f"claim {claim_label(self.claims[ci])}, request {data.own_name}: cannot "
                        f"add device {key} because a claim constraint would not be satisfied"
                    )
                for earlier in constraints[:i]:
                    earlier.remove(data.base, data.sub)
                return False
        return True

    def _counts(self, candidate: Candidate, *, shared: bool) -> bool:
        """Whether taking the device takes its counters: v1.36.3 skips the check for a share of
        a device whose capacity is in use (allocateDevice's skipCounterCheck)."""
        if not candidate.device.consumes_counters:
            return False
        once = shared and self.rules.shares_counters_once
        return not (once and self.capacity.in_use(candidate.key))

    def _capacity_left(self, data: RequestData, candidate: Candidate, index: int) -> bool:
        """allocateDevice's CmpRequestOverCapacity. v0.34.3 (experimental/
        allocator_experimental.go) passes it `r.deviceIndex`, the device's index among the
        request's, as the index into the candidate's slice: it checks the capacity of that
        slice's device at that index, and past the slice's end Go panics, which ends
        kube-scheduler. v0.36.3 checks the candidate, as the search did before (so only an
        `All` request's device can fail here)."""
        checked = candidate
        if self.rules.capacity_at_request_index:
            devices = self.slices.get(candidate.slice, ())
            if index >= len(devices):
                raise AllocationError(
                    f"kube-scheduler v1.34.3 with DRAConsumableCapacity panics here: it checks "
                    f"the capacity of device {index} of slice {candidate.slice or '-'} (of "
                    f"{len(devices)}) for device {'/'.join(candidate.key)} (index out of range)"
                )
            checked = devices[index]
        return self.capacity.fits(checked, data.requested)

    def _refused_for_capacity(
        self, ci: int, data: RequestData, candidate: Candidate, *, counted: bool, shared: bool
    ) -> None:
        """v0.34.3's allocateDevice returns here without undoing anything: the claim's
        constraints keep the device, its counters stay taken and, held whole, it stays taken
        for the claim for the rest of the search; v0.36.3 rolls all of it back."""
        if counted:
            self._refused_after_counters(candidate)
        if self.keep_refused_counters:
            if not shared:
                self.allocating.setdefault(candidate.key, set()).add(ci)
            return
        for constraint in self.constraints[ci]:
            constraint.remove(data.base, data.sub)

    def _refused_after_counters(self, candidate: Candidate) -> None:
        """allocateDevice (structured/internal/experimental/allocator_experimental.go v0.34.3,
        the incubating variant alike) returns on an untolerated taint or a failed constraint
        without calling deallocateCountersForDevice: the counters checkAvailableCounters took
        stay taken for the rest of this search (one pod on one node). v0.36.3's allocateDevice
        (incubating/allocator_incubating.go) gives them back on both paths (rollbackDevice)."""
        if self.keep_refused_counters:
            self.kept_counters = True
        else:
            self.book.give_back(candidate)

    def _undo_take(self, ci: int, taken: Taken, *, counted: bool) -> Undo:
        """The deallocate closure: forget the device in the claim's constraints and results,
        give back a share's capacity; v0.34.3 gives a share's counters back never."""
        constraints, data, candidate = self.constraints[ci], taken.data, taken.candidate
        shared = taken.consumed is not None
        give_back = counted and (not shared or self.rules.shares_counters_once)

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(data.base, data.sub)
            if taken.consumed is not None:
                self.capacity.give_back(candidate.key, taken.consumed)
            else:
                self.allocating[candidate.key].discard(ci)
            self.results[ci].pop()
            if give_back:
                self.book.give_back(candidate)

        return undo


def candidate_checks(
    claims: Sequence[ResourceClaim],
    *,
    pools: Sequence[Pool],
    allocated: frozenset[DeviceKey] | set[DeviceKey],
    matcher: Matcher,
    rules: AllocatorRules,
    keep_refused_counters: bool = True,
    shared: SharedUse | None = None,
) -> CandidateChecks:
    """Nothing taken yet: each claim's constraints fresh, the counters and capacities less
    earlier pods' use (v1.36.3 counts the counters of devices held by shares too)."""
    before = shared if shared is not None and rules.consumable else SharedUse()
    also: set[DeviceKey] = before.held if rules.shares_counters_once else set()
    return CandidateChecks(
        claims=tuple(claims),
        allocated=allocated,
        matcher=matcher,
        rules=rules,
        keep_refused_counters=keep_refused_counters,
        book=counter_book(pools, allocated, also),
        capacity=CapacityBook(before),
        constraints=[
            [_constraint(c, rules.distinct_values) for c in claim.spec.constraints]
            for claim in claims
        ],
        results=[[] for _ in claims],
        slices=_by_slice(pools),
    )


def _by_slice(pools: Sequence[Pool]) -> dict[str, tuple[Candidate, ...]]:
    found: dict[str, list[Candidate]] = {}
    for pool in pools:
        for candidate in pool.devices:
            found.setdefault(candidate.slice, []).append(candidate)
    return {name: tuple(devices) for name, devices in found.items()}


def _constraint(
    constraint: Constraint, distinct_values: bool
) -> MatchAttribute | DistinctAttribute | DistinctValues:
    """Allocate()'s switch: `matchAttribute` if set, else `distinctAttribute`."""
    requests = frozenset(constraint.requests)
    if constraint.match_attribute is not None:
        return MatchAttribute(constraint.match_attribute, requests)
    assert constraint.distinct_attribute is not None  # the API requires one of them
    if distinct_values:
        return DistinctValues(constraint.distinct_attribute, requests)
    return DistinctAttribute(constraint.distinct_attribute, requests)
