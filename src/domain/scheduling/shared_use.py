"""What claims hold of multi-allocatable devices (DRAConsumableCapacity), before a search and
during one: kube-scheduler's `AllocatedState` (AllocatedSharedDeviceIDs, AggregatedCapacity:
k8s.io/dynamic-resource-allocation/structured/schedulerapi v0.36.3, gathered by the
dynamicresources plugin's `foreachAllocatedDevice`, pkg/scheduler/framework/plugins/
dynamicresources/allocateddevices.go v1.36.3) and the allocator's `allocatingCapacity`.

A result with a share ID is a share: its device goes into `held`, and its consumed capacity,
where it has one, is added to the device's sum (an entry that exists even when it sums to
zero: v1.36.3 skips the counter check of a device with one). A result without a share ID holds
its device whole. Admin access holds nothing. With the gate off the scheduler counts a share as
a whole device.
"""

import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from fractions import Fraction

import attrs

from npu_dra.domain.claims import AllocationResult
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.capacity import Amounts, consumption, fits
from npu_dra.domain.scheduling.pools import Candidate, DeviceKey

NOTHING: Mapping[str, Fraction] = {}
_SHARE_IDS = uuid.UUID("3f0d9a52-8c4e-4d1b-a7e6-5b2c9e41d070")


def share_id(claim_uid: str, index: int) -> str:
    """The share ID of a claim's `index`th result. Simulate's own, stable from run to run:
    kube-scheduler makes a random UUID for each share (GenerateShareID, structured/internal
    v0.36.3 allocatedstate.go), so no real share ID is ever this one."""
    return str(uuid.uuid5(_SHARE_IDS, f"{claim_uid}/{index}"))


@attrs.define
class SharedUse:
    """AllocatedSharedDeviceIDs (as the devices they name) and AggregatedCapacity."""

    held: set[DeviceKey] = attrs.Factory(set)
    consumed: dict[DeviceKey, dict[str, Fraction]] = attrs.Factory(dict)

    def add(self, result: AllocationResult) -> None:
        key = (result.driver, result.pool, result.device)
        self.held.add(key)
        if result.consumed_capacity:
            total = self.consumed.setdefault(key, {})
            for name, quantity in result.consumed_capacity:
                total[name] = total.get(name, Fraction(0)) + quantity.value


def split_results(
    results: Iterable[AllocationResult], *, consumable: bool
) -> tuple[list[DeviceKey], list[AllocationResult]]:
    """(devices held whole, shares) among claims' results, as the scheduler gathers them."""
    whole: list[DeviceKey] = []
    shares: list[AllocationResult] = []
    for r in results:
        if r.admin_access:
            continue
        if consumable and r.share_id is not None:
            shares.append(r)
        else:
            whole.append((r.driver, r.pool, r.device))
    return whole, shares


@attrs.define
class CapacityBook:
    """One search's view: what claims hold (`before`) plus what it has taken so far."""

    before: SharedUse
    allocating: dict[DeviceKey, dict[str, Fraction]] = attrs.Factory(dict)
    shares: Counter[DeviceKey] = attrs.Factory(Counter)

    def fits(self, candidate: Candidate, requested: Mapping[str, Quantity]) -> bool:
        key = candidate.key
        held = self.before.consumed.get(key, NOTHING)
        return fits(candidate.device, requested, held, self.allocating.get(key, NOTHING))

    def in_use(self, key: DeviceKey) -> bool:
        """deviceCapacityInUse (v1.36.3): an AggregatedCapacity entry, or a share taken here."""
        return key in self.before.consumed or self.shares[key] > 0

    def take(self, candidate: Candidate, requested: Mapping[str, Quantity]) -> Amounts:
        consumed = consumption(candidate.device, requested)
        total = self.allocating.setdefault(candidate.key, {})
        for name, amount in consumed.items():
            total[name] = total.get(name, Fraction(0)) + amount
        self.shares[candidate.key] += 1
        return consumed

    def give_back(self, key: DeviceKey, consumed: Amounts) -> None:
        total = self.allocating[key]
        for name, amount in consumed.items():
            total[name] -= amount
        self.shares[key] -= 1
