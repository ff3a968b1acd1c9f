"""The consumable-capacity fields of resource.k8s.io/v1 (KEP-5075, DRAConsumableCapacity):
a device's `allowMultipleAllocations` and `capacity.<name>.requestPolicy`, a request's
`capacity.requests` and a result's `consumedCapacity`, to and from the domain.

Kept apart from slices.py and claims.py so these fields can be told from the rest: a server
without the gate drops exactly these.
"""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.domain.errors import DomainError
from npu_dra.domain.pool import CapacityRange, PublishedDevice, RequestPolicy
from npu_dra.domain.quantity import Quantity


def capacity_to_api(device: PublishedDevice) -> dict[str, Any]:
    """`{name: {value, requestPolicy?}}` for a device's capacities."""
    body: dict[str, Any] = {}
    for name, quantity in device.capacity.items():
        entry: dict[str, Any] = {"value": quantity.text}
        policy = device.request_policies.get(name)
        if policy is not None:
            entry["requestPolicy"] = _policy_to_api(policy)
        body[name] = entry
    return body


def _policy_to_api(policy: RequestPolicy) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if policy.default is not None:
        body["default"] = policy.default.text
    if policy.valid_values:
        body["validValues"] = [q.text for q in policy.valid_values]
    if policy.valid_range is not None:
        span = policy.valid_range
        body["validRange"] = {
            "min": span.minimum.text,
            **({"max": span.maximum.text} if span.maximum is not None else {}),
            **({"step": span.step.text} if span.step is not None else {}),
        }
    return body


def quantity_at(fields: Fields, key: str) -> Quantity | None:
    text = fields.opt(key, str)
    if text is None:
        return None
    try:
        return Quantity.parse(text)
    except DomainError as error:
        raise fields.fail(key, str(error)) from error


def request_policies_from_api(device: Fields) -> dict[str, RequestPolicy]:
    policies = {}
    for name in device.mapping("capacity"):
        entry = device.sub("capacity").sub(name)
        if entry.has("requestPolicy"):
            policies[name] = _policy_from_api(entry.sub("requestPolicy"))
    return policies


def _policy_from_api(policy: Fields) -> RequestPolicy:
    values = policy.get("validValues", list, [])
    span = policy.sub("validRange") if policy.has("validRange") else None
    return RequestPolicy(
        default=quantity_at(policy, "default"),
        valid_values=tuple(_parsed(policy, f"validValues[{i}]", v) for i, v in enumerate(values)),
        valid_range=None
        if span is None
        else CapacityRange(
            _required(span, "min"), quantity_at(span, "max"), quantity_at(span, "step")
        ),
    )


def _required(fields: Fields, key: str) -> Quantity:
    quantity = quantity_at(fields, key)
    if quantity is None:
        raise fields.fail(key, "is required")
    return quantity


def _parsed(fields: Fields, key: str, text: object) -> Quantity:
    if not isinstance(text, str):
        raise fields.fail(key, f"expected str, got {text!r}")
    try:
        return Quantity.parse(text)
    except DomainError as error:
        raise fields.fail(key, str(error)) from error


def quantity_map_from_api(fields: Fields, key: str) -> dict[str, Quantity]:
    """`{name: "8Gi"}` under `key` (a request's capacity.requests, a result's
    consumedCapacity)."""
    return {name: _parsed(fields, f"{key}.{name}", v) for name, v in fields.mapping(key).items()}


def quantity_map_to_api(quantities: Mapping[str, Quantity]) -> dict[str, str]:
    return {name: q.text for name, q in quantities.items()}
