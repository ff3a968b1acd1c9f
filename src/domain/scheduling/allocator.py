"""kube-scheduler's DRA allocator for one node, ported from
k8s.io/dynamic-resource-allocation/structured v0.34.3, the "incubating" variant (DRAPrioritizedList
and DRAAdminAccess beta and on; DRADeviceTaints, DRAPartitionableDevices, DRAConsumableCapacity
alpha and off), plus the "experimental" variant's shared counters (DRAPartitionableDevices on)
where slices have them and its `distinctAttribute` (constraints.py): a v1.34.3 kube-scheduler
with its default gates runs the experimental variant, since DRAResourceClaimDeviceStatus (beta,
on) is one the incubating variant does not list.

What versions and gates change is the caller's `AllocatorRules` (rules.py; versions.py says
which version has which): `partitionable` (DRAPartitionableDevices): on, a device consuming
counters is taken only while its counters last (counters.py); off, never. `device_taints`
(DRADeviceTaints): on, a tainted device is taken only for a request that tolerates all its
taints (device_tolerations.py), so an `All` request that selects one does not fit; off, taints
are ignored. `consumable` (DRAConsumableCapacity): on, a device with allowMultipleAllocations
is shared by the claims whose requests its capacity still covers, each result a share with a
share ID and its consumed capacity (capacity.py, shared_use.py); off, every device is exclusive.
`keeps_refused_counters`, `distinct_values`, `shares_counters_once` and
`capacity_at_request_index`: where v1.36.3's search differs.

All unallocated claims of a pod are allocated together: claims in pod order, requests in claim
order, each request's devices one at a time over pools and slices in order; the first complete
solution wins, and a dead end backtracks from the innermost choice (so an earlier claim gives
up a device a later one needs). `firstAvailable` tries subrequests in order. A CEL runtime
error, an invalid pool, a constraint that an `All` request cannot meet or more than 32 devices
per claim are errors for the pod, never "does not fit here": the scheduler aborts the pod's
scheduling cycle with them. Its quirks are kept where they change a result (the comments here,
in request_data.py and in candidates.py say which).

The scheduler's only limit on the search is time (DRASchedulerFilterTimeout, 10 s per node);
this port counts steps instead and says so when it runs out, rather than guess.
"""

from collections.abc import Callable, Mapping, Sequence
from functools import partial

import attrs

from npu_dra.domain.claims import Allocation, AllocationResult, DeviceClass, ResourceClaim
from npu_dra.domain.ids import DeviceClassName, NodeName, RequestName
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.candidates import CandidateChecks, Taken, candidate_checks
from npu_dra.domain.scheduling.configs import allocation_config
from npu_dra.domain.scheduling.errors import AllocationError, SearchBudgetExceeded
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.pools import DeviceKey, Pool
from npu_dra.domain.scheduling.request_data import (
    MAX_RESULTS,
    RequestData,
    Requests,
    gather_requests,
)
from npu_dra.domain.scheduling.rules import AllocatorRules
from npu_dra.domain.scheduling.shared_use import SharedUse, share_id

__all__ = [
    "DEFAULT_RULES",
    "DEFAULT_STEP_BUDGET",
    "AllocationError",
    "SearchBudgetExceeded",
    "allocate_claims",
]

DEFAULT_STEP_BUDGET = 200_000
DEFAULT_RULES = AllocatorRules()


class _MaxSize(Exception):
    """errAllocationResultMaxSizeExceeded: backtrack harder (internal to the search)."""


def allocate_claims(
    claims: Sequence[ResourceClaim],
    *,
    node: NodeName,
    pools: Sequence[Pool],
    classes: Mapping[DeviceClassName, DeviceClass],
    allocated: frozenset[DeviceKey] | set[DeviceKey],
    matcher: Matcher,
    budget: int = DEFAULT_STEP_BUDGET,
    rules: AllocatorRules = DEFAULT_RULES,
    counter_notes: set[NodeName] | None = None,
    shared: SharedUse | None = None,
) -> tuple[Allocation, ...] | None:
    """One allocation per claim, or None when they do not fit on this node together.
    Raises AllocationError (fatal for the pod) and SearchBudgetExceeded. With v1.34.3's rules
    the search keeps the counters of a partition refused after taking them (an untolerated
    taint, a failed constraint: candidates.py); where that changed the answer, `node` goes into
    `counter_notes`. With DRAConsumableCapacity, `allocated` holds the devices held whole and
    `shared` what shares hold (shared_use.py)."""
    fresh_checks = partial(
        candidate_checks,
        claims,
        pools=pools,
        allocated=allocated,
        matcher=matcher,
        rules=rules,
        shared=shared,
    )
    search = partial(_allocate, claims, node=node, pools=pools, classes=classes, budget=budget)
    found, kept = search(fresh_checks(keep_refused_counters=rules.keeps_refused_counters))
    if kept and counter_notes is not None:
        try:
            fair, _ = search(fresh_checks(keep_refused_counters=False))
        except (AllocationError, SearchBudgetExceeded):
            return found
        if fair != found:
            counter_notes.add(node)
    return found


def _allocate(
    claims: Sequence[ResourceClaim],
    checks: CandidateChecks,
    *,
    node: NodeName,
    pools: Sequence[Pool],
    classes: Mapping[DeviceClassName, DeviceClass],
    budget: int,
) -> tuple[tuple[Allocation, ...] | None, bool]:
    """The allocation with `checks` (nothing taken yet), and whether a refused partition kept
    its counters in the search."""
    requests = gather_requests(
        claims,
        pools=pools,
        classes=classes,
        selectable=checks.selectable,
        own_subrequest_keys=checks.rules.own_subrequest_keys,
        capacity_fits=checks.capacity_fits if checks.rules.consumable else None,
    )
    # Allocate() (structured/internal/experimental/allocator_experimental.go v0.34.3, the
    # incubating variant alike) searches with a fresh deviceMatchesRequest: what validating the
    # claims cached (a firstAvailable subrequest under the previous one's index) is dropped.
    checks.cache.clear()
    search = _Search(tuple(claims), tuple(pools), requests, checks, budget)
    if not search.one(0, 0, 0, 0, in_sub=False):
        return None, checks.kept_counters
    found = tuple(
        Allocation(
            tuple(_result(claim, i, t) for i, t in enumerate(results)),
            node,
            allocation_config(claim, [taken.data for taken in results]),
        )
        for claim, results in zip(claims, checks.results, strict=True)
    )
    return found, checks.kept_counters


def _result(claim: ResourceClaim, index: int, taken: Taken) -> AllocationResult:
    """A device taken; a share gets a share ID (simulate's own: see shared_use.share_id) and
    what it consumes, where the device has capacities."""
    r, c, consumed = taken.data, taken.candidate, taken.consumed
    return AllocationResult(
        RequestName(r.name),
        c.driver,
        c.pool,
        c.device.name,
        r.admin,
        share_id=None if consumed is None else share_id(claim.ref.uid, index),
        consumed_capacity=tuple((n, Quantity(v)) for n, v in (consumed or {}).items()),
    )


@attrs.define
class _Search:
    """allocateOne: claims, requests and devices in order, backtracking from the innermost."""

    claims: tuple[ResourceClaim, ...]
    pools: tuple[Pool, ...]
    requests: Requests
    checks: CandidateChecks
    budget: int
    steps: int = 0
    _start: tuple[int, int] = (0, 0)  # (pool, device in pool) after the last device taken

    def one(self, ci: int, ri: int, si: int, di: int, *, in_sub: bool) -> bool:
        self._count_step()
        if ci >= len(self.claims) or ri >= len(self.claims[ci].spec.requests):
            return self._next_claim(ci)
        if not in_sub and (ci, ri) in self.requests.with_subrequests:
            return self._first_available(ci, ri, di)
        data = self.requests.data[(ci, ri, si)]
        if data.all_mode and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self.one(ci, ri + 1, 0, 0, in_sub=False)
        if len(self.checks.results[ci]) + data.num_devices - di > MAX_RESULTS:
            raise _MaxSize
        if data.all_mode:
            return self._all_device(ci, ri, si, di, data, in_sub=in_sub)
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

    def _all_device(
        self, ci: int, ri: int, si: int, di: int, data: RequestData, *, in_sub: bool
    ) -> bool:
        undo = self.checks.take(ci, data, data.all_devices[di], must=True, index=di)
        if undo is None:
            return False
        # v0.34.3 continues an `All` request without its subrequest index, i.e. with
        # subrequest 0's data; kept, since it decides how many devices follow. v0.36.3 keeps
        # the index (incubating/allocator_incubating.go allocateOne).
        own = si if self.checks.rules.own_subrequest_keys else 0
        return self._then(undo, lambda: self.one(ci, ri, own, di + 1, in_sub=in_sub))

    def _some_device(
        self, ci: int, ri: int, si: int, di: int, data: RequestData, *, in_sub: bool
    ) -> bool:
        """v0.34.3 walks every pool from the start for each device and fails on an invalid
        pool; v0.36.3 (incubating/allocator_incubating.go allocateOne's deviceLocation) resumes
        after the previous device of the request and skips invalid and incomplete pools."""
        resumes = self.checks.rules.resumes_search
        start = self._start if resumes and di else (0, 0)
        for pi, pool in enumerate(self.pools[start[0] :], start[0]):
            if pool.invalid and not resumes:
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid}")
            if resumes and (pool.invalid or pool.incomplete):
                continue
            first = start[1] if pi == start[0] else 0
            for ix, candidate in enumerate(pool.devices[first:], first):
                if not self.checks.free_for(ci, data, candidate.key):
                    continue
                if not self.checks.selectable((ci, ri, si), data, candidate):
                    continue
                if self.checks.rules.consumable and not self.checks.capacity_fits(data, candidate):
                    continue
                undo = self.checks.take(ci, data, candidate, must=False, index=di)
                if undo is None:
                    continue
                self._start = (pi, ix + 1)
                if self._then(undo, lambda: self.one(ci, ri, si, di + 1, in_sub=in_sub)):
                    return True
        return False

    def _first_available(self, ci: int, ri: int, di: int) -> bool:
        all_exceeded = True
        si = 0
        while (ci, ri, si) in self.requests.data:
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
