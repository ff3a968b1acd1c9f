"""An in-memory Kubernetes API for the resource.k8s.io objects a node plugin touches.

It keeps objects as API-shaped dicts with the server's bookkeeping (uid, resourceVersion,
metadata.generation bumped on spec changes, generateName), so the same shapes flow through it as
through a real API server and the cluster contract suite can hold both to one standard. UIDs and
generated names are deterministic, so simulation output is stable from run to run.
Objects are kept per kind, and slices also per node, so a simulation of thousands of nodes
publishes and lists in time proportional to what it touches, not to the whole store.
"""

import datetime as dt
import hashlib
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from npu_dra.adapters.cluster.memory_fields import ServedFields
from npu_dra.adapters.cluster.memory_slice_watches import SliceWatch, SliceWatches
from npu_dra.adapters.kube_shapes.claims import (
    allocation_to_api,
    claim_from_api,
    device_class_from_api,
)
from npu_dra.adapters.kube_shapes.events import event_to_api
from npu_dra.adapters.kube_shapes.slices import node_owner, slice_from_api, slice_to_api
from npu_dra.domain.claims import Allocation, ClaimRef, DeviceClass, ResourceClaim
from npu_dra.domain.errors import NotFound
from npu_dra.domain.events import ClusterEvent
from npu_dra.domain.ids import DeviceClassName, DriverName, NodeName
from npu_dra.domain.other_driver import other_driver_publishes, others_devices
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.pool_sync import plan_sync

Key = tuple[str, str, str]  # kind, namespace ("" if cluster-scoped), name
_UID_SPACE = uuid.UUID("6d1c3f6e-5b0c-4b7e-9d43-2f1d8c0e7a11")
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)  # events' time: deterministic, as names are


def _copy(value: Any) -> Any:
    """A deep copy of API-shaped data (dicts, lists, scalars); copy.deepcopy's memo and
    dispatch cost several times more, which dominated large simulations."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return value


def _copy_object(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) for k, v in body.items()}


class MemoryCluster:
    def __init__(
        self,
        *,
        partitionable: bool = True,
        counters_apart: bool = False,
        device_taints: bool = True,
        consumable: bool = True,
    ) -> None:
        # partitionable False: a server without DRAPartitionableDevices, which drops the counter
        # fields; counters_apart: one that wants counter sets in slices of their own (1.35+);
        # consumable False: one without DRAConsumableCapacity (memory_fields.py).
        self._fields = ServedFields(partitionable, counters_apart, consumable)
        # Whether it keeps devices[].taints, as a server with DRADeviceTaints on does; off, it
        # drops them on write without an error, as such a server does.
        self._device_taints = device_taints
        self._objects: dict[Key, dict[str, Any]] = {}
        self._by_kind: dict[str, dict[Key, dict[str, Any]]] = {}
        self._slices_by_node: dict[str, set[Key]] = {}
        self._slice_node: dict[Key, str] = {}
        self._names: set[tuple[str, str]] = set()  # (kind, name) over all namespaces
        self._version = 0
        self._lock = threading.RLock()
        self._slice_watches = SliceWatches(self._lock)

    def partitionable_layout(self, *, node: NodeName, driver: DriverName) -> str | None:
        if not self._fields.partitionable:
            return None
        return "apart" if self._fields.counters_apart else "same-slice"

    # --- generic object store -------------------------------------------------------------
    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            body = self._fields.served(_copy(dict(obj)))
            meta = body.setdefault("metadata", {})
            if not meta.get("name"):
                meta["name"] = self._generated_name(body["kind"], meta.get("generateName", ""))
            key = self._key(body)
            if key in self._objects:
                raise ValueError(f"{key[0]} {key[2]} already exists")
            meta["uid"] = str(uuid.uuid5(_UID_SPACE, f"{key}/{self._version}"))
            meta["generation"] = 1
            self._stamp(body)
            self._store(key, body)
            return _copy_object(body)

    def update(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Replace an object; a stale resourceVersion is a conflict, as on a real server."""
        with self._lock:
            body = self._fields.served(_copy(dict(obj)))
            current = self._objects.get(self._key(body))
            if current is None:
                raise NotFound(f"{self._key(body)} does not exist")
            given = body["metadata"].get("resourceVersion")
            if given and given != current["metadata"]["resourceVersion"]:
                raise ValueError(f"conflict: {self._key(body)} was modified")
            body["metadata"]["uid"] = current["metadata"]["uid"]
            changed = body.get("spec") != current.get("spec")
            body["metadata"]["generation"] = current["metadata"]["generation"] + int(changed)
            self._stamp(body)
            self._store(self._key(body), body)
        self._slice_watches.notify(body)
        return _copy_object(body)

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        with self._lock:
            gone = self._objects.pop((kind, namespace, name), None)
            self._by_kind.get(kind, {}).pop((kind, namespace, name), None)
            self._slices_by_node.get(
                self._slice_node.pop((kind, namespace, name), ""), set()
            ).discard((kind, namespace, name))
        if gone is not None:
            self._slice_watches.notify(gone)

    def get(self, kind: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        with self._lock:
            found = self._objects.get((kind, namespace, name))
            return _copy(found) if found else None

    def list(self, kind: str) -> list[dict[str, Any]]:
        with self._lock:
            found = self._by_kind.get(kind, {})
            return [_copy(found[k]) for k in sorted(found)]

    # --- the ClusterApi port ----------------------------------------------------------------
    def publish_pool(
        self, *, node: NodeName, driver: DriverName, slices: Sequence[ResourceSlice]
    ) -> tuple[ResourceSlice, ...]:
        with self._lock:
            stored = self.list_slices(driver=driver, node=node)
            if others_devices(stored, driver):  # as the kube adapter: left to the other driver
                raise other_driver_publishes(node, driver, stored)
            plan = plan_sync(stored, slices)
            owner = self._node_owner(node)
            for name in plan.deletes:
                self.delete("ResourceSlice", name)
            for s in plan.updates:
                current = self.get("ResourceSlice", s.name or "") or {}
                self.update(
                    {**slice_to_api(s, owner=owner), "metadata": current.get("metadata", {})}
                )
            for s in plan.creates:
                self.create(slice_to_api(s, owner=owner))
            return self.list_slices(driver=driver, node=node)

    def list_slices(
        self, *, driver: DriverName | None = None, node: NodeName | None = None
    ) -> tuple[ResourceSlice, ...]:
        if node is None:
            objects = self.list("ResourceSlice")
        else:
            with self._lock:
                keys = sorted(self._slices_by_node.get(node, ()))
                objects = [_copy(self._objects[k]) for k in keys]
        found = (slice_from_api(o) for o in objects)
        return tuple(
            s
            for s in found
            if (driver is None or s.driver == driver) and (node is None or s.node_name == node)
        )

    def watch_slices(
        self, *, node: NodeName, driver: DriverName, on_change: Callable[[], None]
    ) -> SliceWatch:
        return self._slice_watches.add(node, driver, on_change)

    def get_claim(self, *, ref: ClaimRef) -> ResourceClaim:
        obj = self.get("ResourceClaim", ref.name, ref.namespace)
        if obj is None or obj["metadata"]["uid"] != ref.uid:
            raise NotFound(f"ResourceClaim {ref} not found (deleted or replaced)")
        return claim_from_api(obj)

    def record_event(self, *, event: ClusterEvent) -> None:
        with self._lock:
            suffix = f"{len(self._by_kind.get('Event', {})):x}"  # deterministic, as names are
            self.create(event_to_api(event, instance="memory", now=_EPOCH, suffix=suffix))

    def serves_device_taints(self, *, node: NodeName, driver: DriverName) -> bool:
        return self._device_taints

    def serves_consumable_capacity(self, *, node: NodeName, driver: DriverName) -> bool:
        return self._fields.consumable

    def get_device_class(self, *, name: DeviceClassName) -> DeviceClass:
        obj = self.get("DeviceClass", name)
        if obj is None:
            raise NotFound(f"DeviceClass {name} not found")
        return device_class_from_api(obj)

    # --- what the scheduler and tests do ----------------------------------------------------
    def set_allocation(self, ref: ClaimRef, allocation: Allocation) -> None:
        with self._lock:
            obj = self.get("ResourceClaim", ref.name, ref.namespace)
            if obj is None or obj["metadata"]["uid"] != ref.uid:
                raise NotFound(f"ResourceClaim {ref} not found")
            obj.setdefault("status", {})["allocation"] = allocation_to_api(allocation)
            self.update(obj)

    # --- internals --------------------------------------------------------------------------
    def _key(self, body: Mapping[str, Any]) -> Key:
        meta = body["metadata"]
        return (str(body["kind"]), str(meta.get("namespace") or ""), str(meta["name"]))

    def _store(self, key: Key, body: dict[str, Any]) -> None:
        self._objects[key] = body
        self._by_kind.setdefault(key[0], {})[key] = body
        self._names.add((key[0], key[2]))
        if key[0] == "ResourceSlice":
            if not self._device_taints:
                for device in (body.get("spec") or {}).get("devices") or []:
                    device.pop("taints", None)
            node = str((body.get("spec") or {}).get("nodeName") or "")
            self._slices_by_node.get(self._slice_node.get(key, ""), set()).discard(key)
            self._slices_by_node.setdefault(node, set()).add(key)
            self._slice_node[key] = node

    def _stamp(self, body: dict[str, Any]) -> None:
        self._version += 1
        body["metadata"]["resourceVersion"] = str(self._version)

    def _generated_name(self, kind: str, prefix: str) -> str:
        for attempt in range(1000):
            digest = hashlib.sha256(f"{prefix}/{self._version}/{attempt}".encode()).digest()
            name = prefix + "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])
            if (kind, name) not in self._names:
                return name
        raise RuntimeError(f"no free name for prefix {prefix!r}")

    def node_exists(self, *, node: NodeName) -> bool:
        return self.get("Node", node) is not None

    def kubelet_version(self, *, node: NodeName) -> str | None:
        found = self.get("Node", node)
        if found is None:
            return None
        return str(found.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", ""))

    def _node_owner(self, node: NodeName) -> dict[str, Any] | None:
        found = self.get("Node", node)
        return node_owner(node, found["metadata"]["uid"]) if found else None
