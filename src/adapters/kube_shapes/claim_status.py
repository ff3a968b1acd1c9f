"""A node's entries of a claim's `status.devices` (KEP-4817) as a server-side apply body.

Each entry names its allocated result (driver, pool, device, shareID: the list's map keys), one
`Ready` condition, `data` (domain/device_facts.py) and, where the device has an IP, `networkData`
(the NPU's RoCE address: the rank table's `device_ip`). Shapes and limits:
k8s.io/api resource/v1 AllocatedDeviceStatus, and metav1 Condition, whose `reason` must match
`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$` and which needs a `lastTransitionTime`.

The body applied carries the claim's UID, so an apply meant for a deleted claim never lands on a
new one of the same name (the server refuses a changed UID).
"""

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device_facts import DeviceFacts

API_VERSION = "resource.k8s.io/v1"
READY = "Ready"
PREPARED = "Prepared"
MANAGER_MAX = 128  # metav1 ManagedFieldsEntry.manager


def field_manager(driver: str, node: str) -> str:
    """The apply's owner: one per node, shared by both plugin instances of a seamless upgrade,
    so either one's clear removes what the other wrote."""
    return f"{driver}/{node}"[:MANAGER_MAX]


def status_apply_body(
    ref: ClaimRef, devices: Sequence[DeviceFacts], *, now: dt.datetime
) -> dict[str, Any]:
    """What this node's manager owns of the claim's status: `devices` (none: it owns nothing)."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {"name": ref.name, "namespace": ref.namespace, "uid": ref.uid},
        "status": {"devices": [_entry(d, now) for d in devices]},
    }


def _entry(device: DeviceFacts, now: dt.datetime) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "driver": device.driver,
        "pool": device.pool,
        "device": device.device,
        "conditions": [
            {
                "type": READY,
                "status": "True",
                "reason": PREPARED,
                "message": f"prepared for request {', '.join(device.requests)}"[:1024],
                "lastTransitionTime": now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        ],
        "data": json.loads(device.data_json()),
    }
    if device.share_id is not None:
        entry["shareID"] = device.share_id
    if device.ips:
        entry["networkData"] = {"ips": list(device.ips)}
    return entry
