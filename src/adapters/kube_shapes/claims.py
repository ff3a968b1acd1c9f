"""ResourceClaim and DeviceClass (resource.k8s.io/v1) to and from the domain.

Only `exactly` requests are understood (firstAvailable is reported as unsupported by the offline
allocator, never silently ignored).
"""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.domain.claims import (
    Allocation,
    AllocationMode,
    AllocationResult,
    ClaimRef,
    ClaimSpec,
    Constraint,
    DeviceClass,
    DeviceRequest,
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
    return DeviceClass(DeviceClassName(name), selectors_from_api(root.sub("spec")))


def request_from_api(fields: Fields) -> DeviceRequest:
    name = RequestName(fields.need("name", str))
    if fields.has("firstAvailable"):
        raise fields.fail("firstAvailable", "prioritized lists are not supported here; use exactly")
    exact = fields.sub("exactly")
    mode_text = exact.get("allocationMode", str, "ExactCount")
    try:
        mode = AllocationMode(mode_text)
    except ValueError:
        raise exact.fail("allocationMode", f"{mode_text!r} is not ExactCount or All") from None
    count = exact.get("count", int, 1 if mode is AllocationMode.EXACT_COUNT else 0)
    if mode is AllocationMode.EXACT_COUNT and count < 1:
        raise exact.fail("count", f"must be at least 1 for ExactCount, got {count}")
    if mode is AllocationMode.ALL and count:
        raise exact.fail("count", "must be unset for allocationMode All")
    return DeviceRequest(
        name=name,
        device_class_name=DeviceClassName(exact.need("deviceClassName", str)),
        selectors=selectors_from_api(exact),
        allocation_mode=mode,
        count=count,
        admin_access=exact.get("adminAccess", bool, False),
    )


def spec_from_api(devices: Fields) -> ClaimSpec:
    requests = tuple(request_from_api(r) for r in devices.items("requests"))
    if not requests:
        raise devices.fail("requests", "at least one request is required")
    constraints = tuple(
        Constraint(
            c.need("matchAttribute", str),
            tuple(RequestName(r) for r in c.get("requests", list, [])),
        )
        for c in devices.items("constraints")
    )
    return ClaimSpec(requests, constraints)


def allocation_from_api(fields: Fields) -> Allocation:
    results = tuple(
        AllocationResult(
            request=RequestName(r.need("request", str)),
            driver=DriverName(r.need("driver", str)),
            pool=PoolName(r.need("pool", str)),
            device=DeviceName(r.need("device", str)),
            admin_access=r.get("adminAccess", bool, False),
            share_id=r.opt("shareID", str),
        )
        for r in fields.sub("devices").items("results")
    )
    return Allocation(results, _selected_node(fields.mapping("nodeSelector")))


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
    return ResourceClaim(ref, spec_from_api(root.sub("spec").sub("devices")), allocation)


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
                }
                for r in allocation.results
            ]
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
