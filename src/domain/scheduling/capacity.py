"""How much of a multi-allocatable device's capacity one allocation consumes (KEP-5075,
DRAConsumableCapacity), ported from k8s.io/dynamic-resource-allocation/structured v0.36.3
internal/incubating/consumable_capacity.go (v0.34.3 internal/experimental alike).

Per capacity of the device: a request naming it consumes the amount asked, fitted to the
capacity's request policy (raised to the range's minimum, then up to the next `minimum + k *
step`, or up to the next valid value); a capacity the request does not name consumes the
policy's default, else the whole value. An amount the policy still refuses (above the range's
maximum or the last valid value) refuses the device, as does a sum over all allocations above
the capacity's value. A request naming a capacity the device lacks never gets the device.
These checks run for every device once the gate is on, exclusive ones too (their policies are
forbidden by API validation, so a request is only held to their values).
"""

import math
from collections.abc import Mapping
from fractions import Fraction

from npu_dra.domain.pool import CapacityRange, PublishedDevice, RequestPolicy
from npu_dra.domain.quantity import Quantity

Amounts = Mapping[str, Fraction]  # capacity name -> amount


def consumed_amount(
    requested: Quantity | None, value: Quantity, policy: RequestPolicy | None
) -> Fraction:
    """calculateConsumedCapacity."""
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default.value
        return value.value
    if policy is None:
        return requested.value
    if policy.valid_range is not None:
        return _round_up_range(requested.value, policy.valid_range)
    for valid in policy.valid_values:  # sorted ascending (API validation)
        if requested.value <= valid.value:
            return valid.value
    return requested.value


def _round_up_range(requested: Fraction, span: CapacityRange) -> Fraction:
    """roundUpRange: in whole units (Quantity.Value() rounds up), as upstream computes it."""
    if requested < span.minimum.value:
        return span.minimum.value
    if span.step is None:
        return requested
    step, minimum = _whole(span.step.value), _whole(span.minimum.value)
    if step <= 0:  # API validation refuses such a step; upstream would divide by zero
        return requested
    return Fraction(minimum + step * math.ceil((_whole(requested) - minimum) / step))


def violates(consumed: Fraction, policy: RequestPolicy | None) -> bool:
    """violatesPolicy. Upstream tests the default by struct equality before the rest; API
    validation holds the default to the policy, so comparing values decides alike."""
    if policy is None or (policy.default is not None and consumed == policy.default.value):
        return False
    span = policy.valid_range
    if span is not None:
        if span.maximum is not None and consumed > span.maximum.value:
            return True
        if span.step is None or _whole(span.step.value) <= 0:
            return False
        return (_whole(consumed) - _whole(span.minimum.value)) % _whole(span.step.value) != 0
    if policy.valid_values:
        return all(consumed != v.value for v in policy.valid_values)
    return False


def consumption(device: PublishedDevice, requested: Mapping[str, Quantity]) -> dict[str, Fraction]:
    """GetConsumedCapacityFromRequest: what one allocation takes of each of the device's
    capacities."""
    return {
        name: consumed_amount(requested.get(name), value, device.request_policies.get(name))
        for name, value in sorted(device.capacity.items())
    }


def fits(
    device: PublishedDevice,
    requested: Mapping[str, Quantity],
    held: Amounts,
    allocating: Amounts,
) -> bool:
    """CmpRequestOverCapacity: whether one more allocation fits beside what claims hold
    (`held`) and what this search has taken so far (`allocating`). A request naming a capacity
    the device lacks is upstream's error, which every caller takes as "not this device"."""
    if any(name not in device.capacity for name in requested):
        return False
    for name, value in device.capacity.items():
        policy = device.request_policies.get(name)
        consumed = consumed_amount(requested.get(name), value, policy)
        if violates(consumed, policy):
            return False
        total = held.get(name, Fraction(0)) + consumed + allocating.get(name, Fraction(0))
        if total > value.value:
            return False
    return True


def _whole(value: Fraction) -> int:
    """Quantity.Value(): rounded up, away from zero."""
    return math.ceil(value) if value >= 0 else math.floor(value)
