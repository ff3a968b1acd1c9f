"""What the in-memory API server keeps of a ResourceSlice it is given: a real server with a DRA
gate off drops that gate's fields on write, without an error (kubernetes v1.36.3
pkg/registry/resource/resourceslice/strategy.go, dropDisabledDRAPartitionableDevicesFields and
dropDisabledDRAConsumableCapacityFields), and one from 1.35 refuses counter sets beside devices.
"""

from typing import Any

import attrs


@attrs.frozen
class ServedFields:
    """`partitionable`: counters kept (DRAPartitionableDevices); `counters_apart`: in slices of
    their own (1.35+); `consumable`: allowMultipleAllocations and capacity request policies
    kept (DRAConsumableCapacity)."""

    partitionable: bool = True
    counters_apart: bool = False
    consumable: bool = True

    def served(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body` as this server keeps it (changed in place); ValueError where it refuses it."""
        if body.get("kind") in CLAIM_KINDS and not self.consumable:
            return _without_capacity_requests(body)
        if body.get("kind") != "ResourceSlice":
            return body
        spec = body.get("spec", {})
        if self.counters_apart and "devices" in spec and spec.get("sharedCounters"):
            raise ValueError("ResourceSlice: sharedCounters and devices may not be set together")
        devices = spec.get("devices") or []
        if not self.consumable:
            for device in devices:
                device.pop("allowMultipleAllocations", None)
                for capacity in (device.get("capacity") or {}).values():
                    capacity.pop("requestPolicy", None)
        if not self.partitionable:
            spec.pop("sharedCounters", None)
            for device in devices:
                device.pop("consumesCounters", None)
        return body


CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")


def _without_capacity_requests(body: dict[str, Any]) -> dict[str, Any]:
    """A claim or template without DRAConsumableCapacity: its requests' `capacity` and its
    results' `shareID` and `consumedCapacity` dropped (kubernetes v1.34.3
    pkg/registry/resource/resourceclaim{,template}/strategy.go,
    dropDisabledDRAResourceClaimConsumableCapacityFields). Its `distinctAttribute` is kept: the
    drop loop there assigns to a copy of each constraint."""
    spec = body.get("spec") or {}
    devices = (spec.get("spec") or {}) if body["kind"] != "ResourceClaim" else spec
    for request in (devices.get("devices") or {}).get("requests") or []:
        (request.get("exactly") or {}).pop("capacity", None)
        for sub in request.get("firstAvailable") or []:
            sub.pop("capacity", None)
    allocation = (body.get("status") or {}).get("allocation") or {}
    for result in (allocation.get("devices") or {}).get("results") or []:
        result.pop("shareID", None)
        result.pop("consumedCapacity", None)
    for device in (body.get("status") or {}).get("devices") or []:
        device.pop("shareID", None)
    return body
