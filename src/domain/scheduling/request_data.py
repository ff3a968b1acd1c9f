"""requestData, as the scheduler's allocator builds it in Allocate() before its first
allocateOne (k8s.io/dynamic-resource-allocation/structured v0.34.3): each request's (or
`firstAvailable` subrequest's) device class, selectors, tolerations and device count, an `All`
request's devices listed up front, and each claim held to the 32-device limit.

Apart from the search because it runs once per pod, in claim and request order, and only ever
fails the pod: nothing here backtracks.
"""

from collections.abc import Callable, Mapping, Sequence

import attrs

from npu_dra.domain.claims import (
    AllocationMode,
    CapacityAmounts,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaim,
)
from npu_dra.domain.device_tolerations import DeviceToleration
from npu_dra.domain.ids import DeviceClassName
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.errors import AllocationError
from npu_dra.domain.scheduling.pools import Candidate, Pool

MAX_RESULTS = 32  # resourceapi.AllocationResultsMaxSize

RequestIndex = tuple[int, int, int]  # claim, request, subrequest (0 for a plain request)


@attrs.frozen
class RequestData:
    """requestData: one request, or one subrequest of a firstAvailable request."""

    base: str  # the request's name
    sub: str  # the subrequest's name, "" for a plain request
    device_class: DeviceClass
    selectors: tuple[str, ...]
    all_mode: bool
    admin: bool
    num_devices: int
    all_devices: tuple[Candidate, ...] = ()
    # requestAccessor.tolerations(): `exactly.tolerations`, or the subrequest's own
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: CapacityAmounts = ()  # requestAccessor.capacities(): `capacity.requests`

    @property
    def name(self) -> str:
        return f"{self.base}/{self.sub}" if self.sub else self.base

    @property
    def own_name(self) -> str:
        return self.sub or self.base

    @property
    def requested(self) -> dict[str, Quantity]:
        return dict(self.capacity)


# Whether a candidate passes a request's selectors, remembered under the request's index.
Selectable = Callable[[RequestIndex, RequestData, Candidate], bool]
# Whether a candidate has the capacity a request asks left (DRAConsumableCapacity on).
CapacityFits = Callable[[RequestData, Candidate], bool]


@attrs.frozen
class Requests:
    """Every request's data by index, and the (claim, request) pairs that have subrequests."""

    data: Mapping[RequestIndex, RequestData]
    with_subrequests: frozenset[tuple[int, int]]


def claim_label(claim: ResourceClaim) -> str:
    """The claim as the scheduler's messages name it (klog.KObj)."""
    return f"{claim.ref.namespace}/{claim.ref.name}"


def gather_requests(
    claims: Sequence[ResourceClaim],
    *,
    pools: Sequence[Pool],
    classes: Mapping[DeviceClassName, DeviceClass],
    selectable: Selectable,
    own_subrequest_keys: bool = False,
    capacity_fits: CapacityFits | None = None,
) -> Requests:
    """Allocate()'s set-up, claim by claim; AllocationError for the first claim that fails.
    `own_subrequest_keys`: AllocatorRules' (v1.36.3 validates each subrequest under its own
    index); `capacity_fits`: None with DRAConsumableCapacity off."""
    gatherer = _Gatherer(tuple(pools), classes, selectable, own_subrequest_keys, capacity_fits)
    for ci, claim in enumerate(claims):
        gatherer.claim(ci, claim)
    return Requests(gatherer.data, frozenset(gatherer.with_subrequests))


@attrs.define
class _Gatherer:
    pools: tuple[Pool, ...]
    classes: Mapping[DeviceClassName, DeviceClass]
    selectable: Selectable
    own_subrequest_keys: bool
    capacity_fits: CapacityFits | None
    data: dict[RequestIndex, RequestData] = attrs.Factory(dict)
    with_subrequests: set[tuple[int, int]] = attrs.Factory(set)

    def claim(self, ci: int, claim: ResourceClaim) -> None:
        minimum = 0
        for ri, request in enumerate(claim.spec.requests):
            self._check_capacity_requests(claim, request)
            if request.first_available:
                self.with_subrequests.add((ci, ri))
                counts: list[int] = []
                for si, sub in enumerate(request.first_available):
                    # v1.34.3's Allocate() validates subrequest i under the index of i-1 (its
                    # key is updated after the call; v1.36.3 updates it before), which only
                    # matters for the match cache while validating, where an `All`
                    # subrequest lists its devices: the search starts with a fresh cache.
                    key = si if self.own_subrequest_keys else max(si - 1, 0)
                    data = self._request(claim, sub, request, (ci, ri, key))
                    self.data[(ci, ri, si)] = data
                    counts.append(data.num_devices)
                minimum += min(counts)
            else:
                data = self._request(claim, request, None, (ci, ri, 0))
                self.data[(ci, ri, 0)] = data
                minimum += data.num_devices
        if minimum > MAX_RESULTS:
            raise AllocationError(
                f"claim {claim_label(claim)}: number of requested devices {minimum} exceeds the "
                f"claim limit of {MAX_RESULTS}"
            )

    def _check_capacity_requests(self, claim: ResourceClaim, request: DeviceRequest) -> None:
        """Allocate() with DRAConsumableCapacity off (v0.34.3 experimental; v0.36.3 names the
        subrequest itself where one asks): unreachable through an API server, which drops them."""
        asks = request.capacity or any(s.capacity for s in request.first_available)
        if self.capacity_fits is None and asks:
            raise AllocationError(
                f"claim {claim_label(claim)}, request {request.name}: has capacity requests, but "
                "the DRAConsumableCapacity feature is disabled"
            )

    def _request(
        self,
        claim: ResourceClaim,
        request: DeviceRequest | DeviceSubRequest,
        parent: DeviceRequest | None,
        cache_key: RequestIndex,
    ) -> RequestData:
        device_class = self.classes.get(request.device_class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {claim_label(claim)}, request {request.name}: could not retrieve device "
                f'class {request.device_class_name}: deviceclass.resource.k8s.io "'
                f'{request.device_class_name}" not found'
            )
        all_mode = request.allocation_mode is AllocationMode.ALL
        data = RequestData(
            base=parent.name if parent else request.name,
            sub=request.name if parent else "",
            device_class=device_class,
            selectors=request.selectors,
            all_mode=all_mode,
            admin=isinstance(request, DeviceRequest) and request.admin_access,
            num_devices=0 if all_mode else request.count,
            tolerations=request.tolerations,
            capacity=request.capacity,
        )
        if not all_mode:
            return data
        found = self._all_devices(claim, request, cache_key, data)
        return attrs.evolve(data, num_devices=len(found), all_devices=found)

    def _all_devices(
        self,
        claim: ResourceClaim,
        request: DeviceRequest | DeviceSubRequest,
        cache_key: RequestIndex,
        data: RequestData,
    ) -> tuple[Candidate, ...]:
        """An `All` request's devices: every selected one, from complete and valid pools only."""
        found: list[Candidate] = []
        for pool in self.pools:
            what = f"claim {claim_label(claim)}, request {request.name}: asks for all devices, but"
            if pool.incomplete:
                raise AllocationError(
                    f"{what} resource pool {pool.label} is currently being updated"
                )
            if pool.invalid:
                raise AllocationError(f"{what} resource pool {pool.label} is currently invalid")
            found += (c for c in pool.devices if self._takes(cache_key, data, c))
        return tuple(found)

    def _takes(self, cache_key: RequestIndex, data: RequestData, candidate: Candidate) -> bool:
        """Selected and, with DRAConsumableCapacity on, with the capacity asked left."""
        if not self.selectable(cache_key, data, candidate):
            return False
        return self.capacity_fits is None or self.capacity_fits(data, candidate)
