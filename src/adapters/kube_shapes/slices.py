"""ResourceSlice (resource.k8s.io/v1, flat devices) to and from the domain."""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.capacity import capacity_to_api, request_policies_from_api
from npu_dra.adapters.kube_shapes.counters import (
    consumption_from_api,
    consumption_to_api,
    counter_sets_from_api,
    counter_sets_to_api,
    quantities_from_api,
)
from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.domain.attributes import AttributeValue, Version
from npu_dra.domain.device_taints import DeviceTaint, TaintEffect
from npu_dra.domain.ids import DeviceName, DriverName, NodeName, PoolName
from npu_dra.domain.pool import PoolRef, PublishedDevice, ResourceSlice

API_VERSION = "resource.k8s.io/v1"


def attribute_to_api(value: AttributeValue) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, Version):
        return {"version": value.text}
    return {"string": value}


def attribute_from_api(fields: Fields) -> AttributeValue:
    kinds = [k for k in ("int", "bool", "string", "version") if fields.has(k)]
    if len(kinds) != 1:
        raise fields.fail("", "exactly one of int, bool, string, version must be set")
    kind = kinds[0]
    if kind == "int":
        return fields.need("int", int)
    if kind == "bool":
        return fields.need("bool", bool)
    if kind == "version":
        return Version(fields.need("version", str))
    return fields.need("string", str)


def device_to_api(device: PublishedDevice) -> dict[str, Any]:
    body: dict[str, Any] = {"name": device.name}
    if device.attributes:
        body["attributes"] = {k: attribute_to_api(v) for k, v in device.attributes.items()}
    if device.capacity:
        body["capacity"] = capacity_to_api(device)
    if device.allow_multiple_allocations:
        body["allowMultipleAllocations"] = True
    if device.consumes_counters:
        body["consumesCounters"] = consumption_to_api(device.consumes_counters)
    if device.taints:
        body["taints"] = taints_to_api(device.taints)
    return body


def taints_to_api(taints: tuple[DeviceTaint, ...]) -> list[dict[str, Any]]:
    """`devices[].taints` (resource.k8s.io/v1 DeviceTaint); timeAdded is the server's to set."""
    return [{"key": t.key, "value": t.value, "effect": t.effect.value} for t in taints]


def taints_from_api(fields: Fields) -> tuple[DeviceTaint, ...]:
    """A stored device's taints; the server's timeAdded is not ours and not compared. An
    effect this driver never sets (1.36's "None", or a newer one) is an error, not dropped."""
    effects = {e.value: e for e in TaintEffect}
    taints = []
    for taint in fields.items("taints"):
        effect = taint.need("effect", str)
        if effect not in effects:
            raise taint.fail("effect", f"{effect!r} is not one of {', '.join(effects)}")
        taints.append(
            DeviceTaint(taint.need("key", str), taint.get("value", str, ""), effects[effect])
        )
    return tuple(taints)


def device_from_api(fields: Fields) -> PublishedDevice:
    attributes = {
        k: attribute_from_api(fields.sub("attributes").sub(k)) for k in fields.mapping("attributes")
    }
    capacity = quantities_from_api(fields, "capacity")
    return PublishedDevice(
        DeviceName(fields.need("name", str)),
        attributes,
        capacity,
        consumes_counters=consumption_from_api(fields),
        taints=taints_from_api(fields),
        allow_multiple_allocations=fields.get("allowMultipleAllocations", bool, False),
        request_policies=request_policies_from_api(fields),
    )


def slice_to_api(s: ResourceSlice, *, owner: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The object to create/update; `owner` is the Node ownerReference (GC with the node)."""
    metadata: dict[str, Any] = (
        {"name": s.name} if s.name else {"generateName": f"{s.node_name}-{s.driver}-"}
    )
    if owner:
        metadata["ownerReferences"] = [dict(owner)]
    spec: dict[str, Any] = {
        "driver": s.driver,
        "nodeName": s.node_name,
        "pool": {
            "name": s.pool.name,
            "generation": s.pool.generation,
            "resourceSliceCount": s.pool.resource_slice_count,
        },
    }
    if s.devices or not s.shared_counters:  # 1.35+: a counters slice may not set devices, even []
        spec["devices"] = [device_to_api(d) for d in s.devices]
    if s.shared_counters:
        spec["sharedCounters"] = counter_sets_to_api(s.shared_counters)
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice", "metadata": metadata, "spec": spec}


def slice_from_api(obj: Mapping[str, Any]) -> ResourceSlice:
    root = Fields(obj, obj=describe({"kind": "ResourceSlice", **obj}))
    spec = root.sub("spec")
    pool = spec.sub("pool")
    return ResourceSlice(
        driver=DriverName(spec.need("driver", str)),
        node_name=NodeName(spec.get("nodeName", str, "")),
        pool=PoolRef(
            PoolName(pool.need("name", str)),
            pool.get("generation", int, 0),
            pool.get("resourceSliceCount", int, 1),
        ),
        devices=tuple(device_from_api(d) for d in spec.items("devices")),
        name=root.sub("metadata").opt("name", str),
        shared_counters=counter_sets_from_api(spec),
    )


def node_owner(name: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid, "controller": True}
