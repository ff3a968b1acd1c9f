"""A pod's effective requests from its containers, as kube-scheduler adds them up: k8s.io/
component-helpers resource/helpers.go `PodRequests` and `AggregateContainerRequests` (v0.34.3,
v0.36.3 alike for pods not being resized): the containers' requests summed; init containers one
at a time, each with the sidecars (restartPolicy Always) started before it, the largest of them
kept where it is larger; sidecars also added to the sum; the pod-level requests (PodLevelResources,
on in both versions) replacing the sum for cpu and memory; the overhead added.

Three sums, for three readers: the plain one (NodeResourcesFit's Filter, the node's Requested);
the one NodeResourcesFit's LeastAllocated scores the incoming pod with, a container missing a cpu
or memory request counting 100m / 200Mi (noderesources/resource_allocation.go
`calculatePodResourceRequest`); and the one the pod adds to its node's NonZeroRequested once
bound, where with pod-level requests set the defaults fill only what neither level requests
(pkg/scheduler/framework/types.go `CalculateResource`, `getNonMissingContainerRequests`).
Quantities stay exact until the end; cpu is then rounded up to millicores, the rest to units.
"""

import math
from collections.abc import Mapping
from fractions import Fraction

import attrs

from npu_dra.domain.scheduling.resources import NON_ZERO, PodRequests, Resources

Amounts = Mapping[str, Fraction]
POD_LEVEL = ("cpu", "memory")  # IsSupportedPodLevelResource, hugepages aside
NOT_SCALAR = ("cpu", "memory", "ephemeral-storage", "pods")
DEFAULTS: Amounts = {"cpu": Fraction(NON_ZERO.cpu, 1000), "memory": Fraction(NON_ZERO.memory)}


@attrs.frozen
class Container:
    requests: Amounts = attrs.field(factory=dict)  # after the API server's defaulting from limits
    sidecar: bool = False  # an init container with restartPolicy Always


@attrs.frozen
class PodResources:
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    pod_level: Amounts = attrs.field(factory=dict)  # spec.resources.requests, after defaulting
    overhead: Amounts = attrs.field(factory=dict)


def pod_requests(pod: PodResources) -> PodRequests:
    if not (pod.init_containers or pod.pod_level or pod.overhead) and not any(
        c.requests for c in pod.containers
    ):  # the common case, and the plain sums below say the same
        count = len(pod.containers)
        defaults = Resources(count * NON_ZERO.cpu, count * NON_ZERO.memory)
        return PodRequests(Resources(), defaults, defaults)
    plain = aggregate(pod, {})
    if any(k in POD_LEVEL for k in pod.pod_level):
        missing = {k: v for k, v in DEFAULTS.items() if k not in plain}
    else:
        missing = dict(DEFAULTS)
    held = aggregate(pod, missing) if missing else plain
    return PodRequests(
        resources_of(plain), resources_of(aggregate(pod, DEFAULTS)), resources_of(held)
    )


def aggregate(pod: PodResources, non_missing: Amounts) -> dict[str, Fraction]:
    """PodRequests with `non_missing` (NonMissingContainerRequests) filling each container's
    missing requests."""
    total: dict[str, Fraction] = {}
    for container in pod.containers:
        _add(total, _filled(container.requests, non_missing))
    sidecars: dict[str, Fraction] = {}
    largest_init: dict[str, Fraction] = {}
    for container in pod.init_containers:
        wanted = _filled(container.requests, non_missing)
        if container.sidecar:
            _add(total, wanted)
            _add(sidecars, wanted)
            wanted = dict(sidecars)
        else:
            wanted = {**wanted}
            _add(wanted, sidecars)
        _keep_larger(largest_init, wanted)
    _keep_larger(total, largest_init)
    if any(k in POD_LEVEL for k in pod.pod_level):
        total.update({k: v for k, v in pod.pod_level.items() if k in POD_LEVEL})
    _add(total, pod.overhead)
    return total


def _filled(requests: Amounts, non_missing: Amounts) -> dict[str, Fraction]:
    return {**{k: v for k, v in non_missing.items() if k not in requests}, **requests}


def _add(into: dict[str, Fraction], more: Amounts) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, Fraction(0)) + amount


def _keep_larger(into: dict[str, Fraction], other: Amounts) -> None:
    for name, amount in other.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def resources_of(amounts: Amounts) -> Resources:
    """cpu in millicores, memory and ephemeral-storage in bytes, each rounded up; the other
    (scalar) resources by name, in units (Quantity.Value)."""
    return Resources(
        math.ceil(amounts.get("cpu", Fraction(0)) * 1000),
        math.ceil(amounts.get("memory", Fraction(0))),
        math.ceil(amounts.get("ephemeral-storage", Fraction(0))),
        tuple(sorted((n, math.ceil(a)) for n, a in amounts.items() if n not in NOT_SCALAR and a)),
    )


def is_extended(name: str) -> bool:
    """v1helper.IsExtendedResourceName (k8s.io/kubernetes pkg/apis/core/v1/helper/helpers.go):
    qualified, not native (no kubernetes.io/ domain), not a quota `requests.` name."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")
