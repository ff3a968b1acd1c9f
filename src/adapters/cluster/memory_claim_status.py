"""ClaimStatusWriter on the in-memory API: each writer's entries of `status.devices` kept apart,
as server-side apply keeps each field manager's (adapters/cluster/kube/claim_status.py), and
refused, as the API server refuses them, unless each entry names an allocated result."""

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.kube_shapes.claim_status import field_manager, status_apply_body
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device_facts import DeviceFacts
from npu_dra.domain.errors import ClusterUnavailable, NotFound
from npu_dra.domain.ids import DriverName, NodeName

_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
OWNERS = "npu-dra.test/status-owners"  # where the emulation keeps who wrote which entry


class MemoryClaimStatus:
    def __init__(self, cluster: MemoryCluster) -> None:
        self._cluster = cluster
        self.writes = 0

    def write_device_status(
        self, *, ref: ClaimRef, driver: DriverName, node: NodeName, devices: Sequence[DeviceFacts]
    ) -> None:
        claim = self._cluster.get("ResourceClaim", ref.name, ref.namespace)
        if claim is None or claim["metadata"]["uid"] != ref.uid:
            raise NotFound(f"ResourceClaim {ref} not found (deleted or replaced)")
        entries = status_apply_body(ref, devices, now=_EPOCH)["status"]["devices"]
        _check_allocated(ref, claim, entries)
        manager = field_manager(driver, node)
        owners = json.loads(claim["metadata"].get("annotations", {}).get(OWNERS, "{}"))
        status = claim.setdefault("status", {})
        kept = [e for e in status.get("devices", []) if owners.get(_key(e)) != manager]
        owners = {k: m for k, m in owners.items() if m != manager}
        owners |= {_key(e): manager for e in entries}
        status["devices"] = kept + entries
        claim["metadata"].setdefault("annotations", {})[OWNERS] = json.dumps(owners)
        self._cluster.update(claim)
        self.writes += 1


def _check_allocated(ref: ClaimRef, claim: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    results = (claim.get("status", {}).get("allocation") or {}).get("devices", {}).get("results")
    allocated = {_key(r) for r in results or []}
    for entry in entries:
        if _key(entry) not in allocated:
            raise ClusterUnavailable(
                f"claim {ref}: status.devices {_key(entry)}: must be an allocated device"
            )


def _key(entry: dict[str, Any]) -> str:
    return "/".join((entry["driver"], entry["pool"], entry["device"], entry.get("shareID") or ""))
