"""ResourceClaim and DeviceClass (resource.k8s.io/v1) to and from the domain.

Requests are `exactly` or `firstAvailable` (a prioritized list of subrequests), checked as the
API server validates them (counts, sizes, fully qualified `matchAttribute`, tolerations).
"""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.capacity import quantity_map_from_api, quantity_map_to_api
from npu_dra.adapters.kube_shapes.configs import configs_from_api, configs_to_api
from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.adapters.kube_shapes.tolerations import tolerations_from_api
from npu_dra.domain.claims import (
    Allocation,
    AllocationMode,
    AllocationResult,
    CapacityAmounts,
    ClaimRef,
    ClaimSpec,
    ConfigSource,
    Constraint,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaim,
)
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceClassName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)


def selectors_from_api(fields: Fields, key: str = "selectors") -> tuple[str, ...]:
    return tuple(s.sub("cel").need("expression", str) for s in fields.items(key))


def device_class_from_api(obj: Mapping[str, Any]) -> DeviceClass:
    root = Fields(obj, obj=describe({"kind": "DeviceClass", **obj}))
    name = root.sub("metadata").need("name", str)
    spec = root.sub("spec")
    config = configs_from_api(spec, ConfigSource.CLASS)
    return DeviceClass(DeviceClassName(name), selectors_from_api(spec), config)


def capacity_requests_from_api(fields: Fields) -> CapacityAmounts:
    """A request's `capacity.requests` (DRAConsumableCapacity), as given."""
    return tuple(quantity_map_from_api(fields.sub("capacity"), "requests").items())


MAX_REQUESTS = 32  # DeviceRequestsMaxSize
MAX_CONSTRAINTS = 32  # DeviceConstraintsMaxSize
MAX_SELECTORS = 32  # DeviceSelectorsMaxSize
MAX_SUBREQUESTS = 8  # FirstAvailableDeviceRequestMaxSize


def _mode_and_count(fields: Fields) -> tuple[AllocationMode, int]:
    mode_text = fields.get("allocationMode", str, "ExactCount")
    try:
        mode = AllocationMode(mode_text)
    except ValueError:
        raise fields.fail("allocationMode", f"{mode_text!r} is not ExactCount or All") from None
    count = fields.get("count", int, 0)
    if mode is AllocationMode.EXACT_COUNT and count == 0:
        count = 1  # the API server's default for an unset (zero) count
    if mode is AllocationMode.EXACT_COUNT and count < 1:
        raise fields.fail("count", f"must be greater than zero, got {count}")
    if mode is AllocationMode.ALL and count:
        raise fields.fail("count", "must not be specified when allocationMode is 'All'")
    if len(fields.get("selectors", list, [])) > MAX_SELECTORS:
        raise fields.fail("selectors", f"must have at most {MAX_SELECTORS} items")
    return mode, count


def subrequest_from_api(fields: Fields) -> DeviceSubRequest:
    mode, count = _mode_and_count(fields)
    return DeviceSubRequest(
        name=RequestName(fields.need("name", str)),
        device_class_name=DeviceClassName(fields.need("deviceClassName", str)),
        selectors=selectors_from_api(fields),
        allocation_mode=mode,
        count=count,
        tolerations=tolerations_from_api(fields),
        capacity=capacity_requests_from_api(fields),
    )


def request_from_api(fields: Fields) -> DeviceRequest:
    name = RequestName(fields.need("name", str))
    if fields.has("firstAvailable"):
        if fields.has("exactly"):
            raise fields.fail("exactly", "exactly one of exactly, firstAvailable is required")
        subs = tuple(subrequest_from_api(f) for f in fields.items("firstAvailable"))
        if not subs or len(subs) > MAX_SUBREQUESTS:
            raise fields.fail("firstAvailable", f"must have 1 to {MAX_SUBREQUESTS} items")
        _unique(fields, "firstAvailable", [s.name for s in subs])
        return DeviceRequest(name=name, device_class_name=DeviceClassName(""), first_available=subs)
    if not fields.has("exactly"):
        raise fields.fail("exactly", "exactly one of exactly, firstAvailable is required")
    exact = fields.sub("exactly")
    mode, count = _mode_and_count(exact)
    return DeviceRequest(
        name=name,
        device_class_name=DeviceClassName(exact.need("deviceClassName", str)),
        selectors=selectors_from_api(exact),
        allocation_mode=mode,
        count=count,
        admin_access=exact.get("adminAccess", bool, False),
        tolerations=tolerations_from_api(exact),
        capacity=capacity_requests_from_api(exact),
    )


def _unique(fields: Fields, key: str, names: list[RequestName]) -> None:
    for i, name in enumerate(names):
        if name in names[:i]:
            raise fields.fail(f"{key}[{i}].name", f"duplicate value {name!r}")


def spec_from_api(devices: Fields) -> ClaimSpec:
    requests = tuple(request_from_api(r) for r in devices.items("requests"))
    if not requests:
        raise devices.fail("requests", "at least one request is required")
    if len(requests) > MAX_REQUESTS:
        raise devices.fail("requests", f"must have at most {MAX_REQUESTS} items")
    _unique(devices, "requests", [r.name for r in requests])
    known = {r.name for r in requests} | {
        f"{r.name}/{s.name}" for r in requests for s in r.first_available
    }
    constraints = tuple(_constraint(c, known) for c in devices.items("constraints"))
    if len(constraints) > MAX_CONSTRAINTS:
        raise devices.fail("constraints", f"must have at most {MAX_CONSTRAINTS} items")
    config = configs_from_api(devices, ConfigSource.CLAIM)
    for i, entry in enumerate(config):
        for j, name in enumerate(entry.requests):
            if name not in known:
                raise devices.fail(f"config[{i}].requests[{j}]", f"{name!r} is not a request")
    return ClaimSpec(requests, constraints, config)


def _constraint(fields: Fields, known: set[str]) -> Constraint:
    """validateDeviceConstraint v1.34.3: `matchAttribute` if set, else `distinctAttribute` (kept
    with DRAConsumableCapacity off: the strategy's drop loop sets it on a copy), is checked."""
    names = fields.get("requests", list, [])
    for i, name in enumerate(names):
        if name not in known:
            raise fields.fail(f"requests[{i}]", f"{name!r} is not the name of a request")
    requests = tuple(RequestName(r) for r in names)
    distinct = fields.opt("distinctAttribute", str)
    if fields.has("matchAttribute") or distinct is None:
        return Constraint(_qualified(fields, "matchAttribute"), requests, distinct)
    return Constraint(None, requests, _qualified(fields, "distinctAttribute"))


def _qualified(fields: Fields, key: str) -> str:
    attribute = fields.need(key, str)
    domain, _, identifier = attribute.partition("/")
    if not identifier or not domain:
        raise fields.fail(key, "a fully qualified name must be domain/identifier")
    return attribute


def allocation_from_api(fields: Fields) -> Allocation:
    results = tuple(
        AllocationResult(
            request=RequestName(r.need("request", str)),
            driver=DriverName(r.need("driver", str)),
            pool=PoolName(r.need("pool", str)),
            device=DeviceName(r.need("device", str)),
            admin_access=r.get("adminAccess", bool, False),
            share_id=r.opt("shareID", str),
            consumed_capacity=tuple(quantity_map_from_api(r, "consumedCapacity").items()),
        )
        for r in fields.sub("devices").items("results")
    )
    config = configs_from_api(fields.sub("devices"), None)
    return Allocation(results, _selected_node(fields.mapping("nodeSelector")), config)


def claim_from_api(obj: Mapping[str, Any]) -> ResourceClaim:
    root = Fields(obj, obj=describe({"kind": "ResourceClaim", **obj}))
    meta = root.sub("metadata")
    try:
        ref = ClaimRef(
            Namespace(meta.get("namespace", str, "default")),
            ClaimName(meta.need("name", str)),
            ClaimUID(meta.get("uid", str, "pending")),
        )
    except DomainError as error:
        raise meta.fail("name", str(error)) from error
    status = root.sub("status")
    allocation = allocation_from_api(status.sub("allocation")) if status.has("allocation") else None
    spec = spec_from_api(root.sub("spec").sub("devices"))
    return ResourceClaim(ref, spec, allocation, _owner_pod(obj), _reserved_pods(obj))


def _owner_pod(obj: Mapping[str, Any]) -> str | None:
    """The UID of the pod controlling the claim (ownerReferences, controller: true)."""
    for owner in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if (
            owner.get("controller")
            and owner.get("kind") == "Pod"
            and owner.get("apiVersion") == "v1"
        ):
            return str(owner.get("uid") or "") or None
    return None


def _reserved_pods(obj: Mapping[str, Any]) -> tuple[str, ...]:
    reserved = (obj.get("status") or {}).get("reservedFor") or ()
    return tuple(
        str(r.get("uid")) for r in reserved if r.get("resource") == "pods" and not r.get("apiGroup")
    )


def allocation_to_api(allocation: Allocation) -> dict[str, Any]:
    body: dict[str, Any] = {
        "devices": {
            "results": [
                {
                    "request": r.request,
                    "driver": r.driver,
                    "pool": r.pool,
                    "device": r.device,
                    **({"adminAccess": True} if r.admin_access else {}),
                    **({"shareID": r.share_id} if r.share_id else {}),
                    **(
                        {"consumedCapacity": quantity_map_to_api(dict(r.consumed_capacity))}
                        if r.consumed_capacity
                        else {}
                    ),
                }
                for r in allocation.results
            ],
            **(
                {"config": configs_to_api(allocation.config, sources=True)}
                if allocation.config
                else {}
            ),
        }
    }
    if allocation.node_name:
        body["nodeSelector"] = {
            "nodeSelectorTerms": [
                {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [allocation.node_name]}
                    ]
                }
            ]
        }
    return body


def _selected_node(selector: Mapping[str, Any]) -> NodeName | None:
    """The node of a scheduler-written selector (one term, metadata.name In [node])."""
    for term in selector.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and len(field.get("values") or []) == 1:
                return NodeName(field["values"][0])
    return None
