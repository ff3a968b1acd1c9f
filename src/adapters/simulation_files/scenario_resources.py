"""Requests and allocatable as the API server stores them, for NodeResourcesFit: a container's
requests defaulted from its limits where unset (kubernetes v1.34.3 pkg/apis/core/v1/defaults.go
`SetDefaults_Pod`), pod-level requests likewise (`defaultPodRequests`: PodLevelResources is on in
v1.34.3 and v1.36.3), quantities checked as validation checks them; a SimulatedNode's
`spec.allocatable` over the default its real twin in the differential test gets, a snapshot
Node's `status.allocatable` as the scheduler reads it (an absent resource is none).
"""

import math
from collections.abc import Mapping
from fractions import Fraction

from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.domain.errors import InvalidQuantity
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.pod_requests import (
    POD_LEVEL,
    Container,
    PodResources,
    aggregate,
    is_extended,
    pod_requests,
    resources_of,
)
from npu_dra.domain.scheduling.resources import DEFAULT_ALLOCATABLE, Allocatable, PodRequests

NODE_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods")


def pod_resources(spec: Fields) -> PodRequests:
    containers = tuple(_container(c, init=False) for c in spec.items("containers"))
    init = tuple(_container(c, init=True) for c in spec.items("initContainers"))
    pod_level = _pod_level(spec.sub("resources"), PodResources(containers, init))
    overhead = amounts(spec, "overhead")
    return pod_requests(PodResources(containers, init, pod_level, overhead))


def simulated_allocatable(spec: Fields) -> Allocatable:
    """SimulatedNode.spec.allocatable (cpu, memory, ephemeral-storage, pods) over the default
    (what tests/support/controlplane.py `create_ready_node` gives a real node)."""
    given = amounts(spec, "allocatable")
    for name in given:
        if name not in NODE_RESOURCES and not is_extended(name):
            raise spec.fail(
                f"allocatable.{name}",
                f"simulate models {', '.join(NODE_RESOURCES)} and extended resources",
            )
    default = DEFAULT_ALLOCATABLE.resources
    defaults = {
        "cpu": Fraction(default.cpu, 1000),
        "memory": Fraction(default.memory),
        "ephemeral-storage": Fraction(default.storage),
        "pods": Fraction(DEFAULT_ALLOCATABLE.pods),
    }
    return _allocatable({**defaults, **given})


def reported_allocatable(status: Fields) -> Allocatable:
    """Node.status.allocatable; a Node whose status has none (written by hand, not registered
    by a kubelet) gets what a SimulatedNode gets."""
    if not status.has("allocatable"):
        return DEFAULT_ALLOCATABLE
    return _allocatable(amounts(status, "allocatable"))


def amounts(fields: Fields, key: str) -> dict[str, Fraction]:
    """A resource list: name -> exact quantity, each a valid, non-negative quantity."""
    found = {}
    for name, value in fields.mapping(key).items():
        where = f"{key}.{name}"
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise fields.fail(where, f"expected a quantity, got {value!r}")
        try:
            amount = Quantity.parse(str(value)).value
        except InvalidQuantity as error:
            raise fields.fail(where, str(error)) from error
        if amount < 0:
            raise fields.fail(where, "must be greater than or equal to 0")
        found[str(name)] = amount
    return found


def _container(fields: Fields, *, init: bool) -> Container:
    resources = fields.sub("resources")
    limits, requests = amounts(resources, "limits"), amounts(resources, "requests")
    for name, amount in requests.items():
        if name in limits and amount > limits[name]:
            limit = Quantity(limits[name])
            raise resources.fail(
                f"requests.{name}", f"must be less than or equal to {name} limit of {limit}"
            )
    sidecar = init and fields.get("restartPolicy", str, "") == "Always"
    return Container({**limits, **requests}, sidecar)


def _pod_level(resources: Fields, containers: PodResources) -> dict[str, Fraction]:
    """spec.resources.requests, defaulted where spec.resources.limits is set: from what the
    containers request, else from the limit."""
    requests, limits = amounts(resources, "requests"), amounts(resources, "limits")
    if not limits:
        return requests
    requested = aggregate(containers, {})
    for name in POD_LEVEL:
        if name not in requests and name in requested:
            requests[name] = requested[name]
    for name, limit in limits.items():
        if name not in requests and name in POD_LEVEL:
            requests[name] = limit
    return requests


def _allocatable(found: Mapping[str, Fraction]) -> Allocatable:
    return Allocatable(resources_of(found), math.ceil(found.get("pods", 0)))
