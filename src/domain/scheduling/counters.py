"""Shared counters during one allocation, as kube-scheduler's allocator keeps them with
DRAPartitionableDevices on (k8s.io/dynamic-resource-allocation/structured v0.34.3, the
"experimental" variant the scheduler picks once that gate is on: `checkAvailableCounters`).

Per slice: what its `sharedCounters` offer, less what devices already allocated (by earlier
pods; from v1.36.3 devices held by shares too, `IsDeviceAllocated`) consume, less what devices
taken so far in this search consume. A device fits when every counter of its slice stays
non-negative. Counters are per slice in 1.34: a device can only
consume a counter set of its own slice; from 1.35 counter sets live in slices of their own and
belong to the pool (`Candidate.counters_in` says which).
"""

from collections.abc import Iterable, Mapping
from fractions import Fraction

import attrs

from npu_dra.domain.scheduling.pools import Candidate, DeviceKey, Pool

Counts = dict[str, dict[str, Fraction]]  # counter set -> counter -> value


def _add(into: Counts, consumed: Candidate, sign: int) -> None:
    for consumption in consumed.device.consumes_counters:
        target = into.setdefault(consumption.counter_set, {})
        for name, quantity in consumption.counters.items():
            target[name] = target.get(name, Fraction(0)) + sign * quantity.value


@attrs.define
class CounterBook:
    shared: Mapping[str, Mapping[str, Mapping[str, Fraction]]]  # slice -> offered counters
    by_slice: Mapping[str, tuple[Candidate, ...]]
    allocated: frozenset[DeviceKey] | set[DeviceKey]
    also: frozenset[DeviceKey] | set[DeviceKey] = frozenset()  # held by shares, counted too
    _available: dict[str, Counts] = attrs.Factory(dict)
    _consumed: dict[str, Counts] = attrs.Factory(dict)

    def take(self, candidate: Candidate) -> bool:
        """Count the candidate's consumption in, if its slice's counters allow; else False."""
        available = self._available_in(candidate.counters_in)
        consumed = self._consumed.setdefault(candidate.counters_in, {})
        _add(consumed, candidate, +1)
        for set_name, counters in available.items():
            for name, value in counters.items():
                if value < consumed.get(set_name, {}).get(name, Fraction(0)):
                    _add(consumed, candidate, -1)
                    return False
        return True

    def give_back(self, candidate: Candidate) -> None:
        _add(self._consumed.setdefault(candidate.counters_in, {}), candidate, -1)

    def _available_in(self, slice_name: str) -> Counts:
        if slice_name not in self._available:
            available: Counts = {
                s: dict(counters) for s, counters in self.shared.get(slice_name, {}).items()
            }
            for device in self.by_slice.get(slice_name, ()):
                if device.key in self.allocated or device.key in self.also:
                    _add(available, device, -1)
            self._available[slice_name] = available
        return self._available[slice_name]


def counter_book(
    pools: Iterable[Pool],
    allocated: frozenset[DeviceKey] | set[DeviceKey],
    also: frozenset[DeviceKey] | set[DeviceKey] = frozenset(),
) -> CounterBook:
    shared: dict[str, dict[str, dict[str, Fraction]]] = {}
    by_slice: dict[str, list[Candidate]] = {}
    for pool in pools:
        shared.update(
            {name: {s: dict(c) for s, c in sets.items()} for name, sets in pool.counters.items()}
        )
        for device in pool.devices:
            by_slice.setdefault(device.counters_in, []).append(device)
    return CounterBook(shared, {k: tuple(v) for k, v in by_slice.items()}, allocated, also)
