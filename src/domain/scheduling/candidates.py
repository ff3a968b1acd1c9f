"""The allocator's checks on one candidate device for one request, and what taking it records
(k8s.io/dynamic-resource-allocation/structured v0.34.3: `isSelectable`, `selectorsMatch`,
`allocateDevice` and its deallocate closure).

A device serves a request when it is free (admin access may share it, but not within one claim),
the device class's and the request's CEL selectors accept it, its slice's shared counters still
cover it, the request tolerates its taints (with DRADeviceTaints on) and the claim's
`matchAttribute` constraints take it. Apart from the search because
these are the per-device rules, while the search only decides the order of trying devices.
"""

from collections.abc import Callable, Sequence

import attrs

from npu_dra.domain.claims import Constraint, ResourceClaim
from npu_dra.domain.device_tolerations import all_tolerated
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

Undo = Callable[[], None]


@attrs.define
class CandidateChecks:
    """The devices taken so far in one search, per claim, and the checks that add to them."""

    claims: tuple[ResourceClaim, ...]
    allocated: frozenset[DeviceKey] | set[DeviceKey]
    matcher: Matcher
    rules: AllocatorRules
    book: CounterBook
    constraints: list[list[MatchAttribute | DistinctAttribute | DistinctValues]]
    results: list[list[tuple[RequestData, Candidate]]]
    # v1.34.3's bookkeeping (see _refused_after_counters); False gives the counters back
    keep_refused_counters: bool = True
    kept_counters: bool = False  # whether a refused partition kept its counters in this search
    allocating: dict[DeviceKey, set[int]] = attrs.Factory(dict)
    cache: dict[tuple[int, int, int, DeviceKey], bool] = attrs.Factory(dict)

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

    def take(self, ci: int, data: RequestData, candidate: Candidate, *, must: bool) -> Undo | None:
        """allocateDevice: the device if it is free, tolerated and meets the claim's constraints."""
        if not self.free_for(ci, data, candidate.key):
            return None
        counted = bool(candidate.device.consumes_counters)
        if counted and (not self.rules.partitionable or not self.book.take(candidate)):
            return None  # as allocateDevice: no error, even for an `All` request
        if self.rules.device_taints and not all_tolerated(
            candidate.device.taints, data.tolerations
        ):
            if counted:
                self._refused_after_counters(candidate)
            return None  # as allocateDevice: no error, even for an `All` request
        constraints = self.constraints[ci]
        for i, constraint in enumerate(constraints):
            if not constraint.add(data.base, data.sub, candidate):
                if counted:
                    self._refused_after_counters(candidate)
                if must:
                    key = "/".join(candidate.key)
                    raise AllocationError(
                        f"claim {claim_label(self.claims[ci])}, request {data.own_name}: cannot "
                        f"add device {key} because a claim constraint would not be satisfied"
                    )
                for earlier in constraints[:i]:
                    earlier.remove(data.base, data.sub)
                return None
        self.allocating.setdefault(candidate.key, set()).add(ci)
        self.results[ci].append((data, candidate))
        return self._undo_take(ci, data, candidate, counted=counted)

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

    def _undo_take(
        self, ci: int, data: RequestData, candidate: Candidate, *, counted: bool
    ) -> Undo:
        """The deallocate closure: forget the device in the claim's constraints and results."""
        constraints = self.constraints[ci]

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(data.base, data.sub)
            self.allocating[candidate.key].discard(ci)
            self.results[ci].pop()
            if counted:
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
) -> CandidateChecks:
    """Nothing taken yet: each claim's constraints fresh, the counters less earlier pods' use."""
    return CandidateChecks(
        claims=tuple(claims),
        allocated=allocated,
        matcher=matcher,
        rules=rules,
        keep_refused_counters=keep_refused_counters,
        book=counter_book(pools, allocated),
        constraints=[
            [_constraint(c, rules.distinct_values) for c in claim.spec.constraints]
            for claim in claims
        ],
        results=[[] for _ in claims],
    )


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
