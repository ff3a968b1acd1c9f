"""`simulate --explain` on consumable capacity (DRAConsumableCapacity): which free devices have
the capacity a request asks left, and, where none has, why the first one has not, in the terms
the allocator decides by (domain/scheduling/capacity.py): the amount asked as the device's
request policy fits it, against what is left of the device's capacity once the claims holding
shares of it are counted.

kube-scheduler itself says only "cannot allocate all claims" for this. With the gate off the
API server drops requests' capacity and devices' sharing, and shares count as whole devices, so
every free device has room and nothing here changes an answer.
"""

from collections.abc import Mapping
from fractions import Fraction

from npu_dra.domain.claims import CapacityAmounts
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.capacity import consumed_amount, fits, violates
from npu_dra.domain.scheduling.index import ClusterIndex
from npu_dra.domain.scheduling.pools import Candidate


def has_room(candidate: Candidate, capacity: CapacityAmounts, index: ClusterIndex) -> bool:
    """Whether one more allocation asking `capacity` fits the device beside the shares held."""
    held = index.shared.consumed.get(candidate.key, {})
    return fits(candidate.device, dict(capacity), held, {})


def no_room(candidate: Candidate, capacity: CapacityAmounts, index: ClusterIndex) -> str:
    """Why the device has no room for the request, naming the first capacity that refuses."""
    device, asked = candidate.device, dict(capacity)
    missing = sorted(set(asked) - set(device.capacity))
    if missing:
        return f"device {device.name} has no capacity {', '.join(missing)}"
    held: Mapping[str, Fraction] = index.shared.consumed.get(candidate.key, {})
    for name, value in sorted(device.capacity.items()):
        policy = device.request_policies.get(name)
        consumed = consumed_amount(asked.get(name), value, policy)
        what = _asked(name, asked.get(name), consumed)
        if violates(consumed, policy):
            return f"{what}: device {device.name}'s requestPolicy for {name} does not allow it"
        if consumed > value.value:
            return f"{what}: more than device {device.name}'s {value}"
        left = value.value - held.get(name, Fraction(0))
        if consumed > left:
            return f"{what}: {Quantity(left)} of {value} left on device {device.name}"
    return f"device {device.name} has room"  # not reached for a device has_room refused


def _asked(name: str, asked: Quantity | None, consumed: Fraction) -> str:
    if asked is None:
        return f"{name} not asked, so its default {Quantity(consumed)} taken"
    if asked.value == consumed:
        return f"{name} {asked} asked"
    return f"{name} {asked} asked ({Quantity(consumed)} as the requestPolicy rounds it)"
