"""The partitionable-device fields of a ResourceSlice (KEP-4815, resource.k8s.io/v1):
`spec.sharedCounters` and `devices[].consumesCounters`, to and from the domain.

Kept apart from slices.py so the counter fields can be told from the rest: a server without
DRAPartitionableDevices drops exactly these.
"""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.domain.errors import DomainError
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.vnpu.layout import CounterConsumption, CounterSet


def counters_to_api(counters: Mapping[str, Quantity]) -> dict[str, Any]:
    return {name: {"value": q.text} for name, q in counters.items()}


def counter_sets_to_api(sets: tuple[CounterSet, ...]) -> list[dict[str, Any]]:
    return [{"name": s.name, "counters": counters_to_api(s.counters)} for s in sets]


def consumption_to_api(consumed: tuple[CounterConsumption, ...]) -> list[dict[str, Any]]:
    return [
        {"counterSet": c.counter_set, "counters": counters_to_api(c.counters)} for c in consumed
    ]


def quantities_from_api(fields: Fields, key: str) -> dict[str, Quantity]:
    """`{name: {value: "32Gi"}}` under `key` (a device's capacity, a counter set's counters)."""
    quantities = {}
    for name in fields.mapping(key):
        entry = fields.sub(key).sub(name)
        try:
            quantities[name] = Quantity.parse(entry.need("value", str))
        except DomainError as error:
            raise entry.fail("value", str(error)) from error
    return quantities


def counters_from_api(fields: Fields) -> dict[str, Quantity]:
    return quantities_from_api(fields, "counters")


def counter_sets_from_api(spec: Fields) -> tuple[CounterSet, ...]:
    return tuple(
        CounterSet(s.need("name", str), counters_from_api(s)) for s in spec.items("sharedCounters")
    )


def consumption_from_api(device: Fields) -> tuple[CounterConsumption, ...]:
    return tuple(
        CounterConsumption(c.need("counterSet", str), counters_from_api(c))
        for c in device.items("consumesCounters")
    )
