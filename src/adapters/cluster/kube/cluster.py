"""KubeCluster: publishes a node's pool and reads claims on a real API server (resource.k8s.io/v1).

Objects travel as plain dicts (`_preload_content=False`, dict bodies) so they pass through the same
shape code as the in-memory API; the client's generated models would silently drop fields they do
not know. Slices are selected by the `spec.driver`/`spec.nodeName` field selectors, owned by the
Node (garbage-collected with it), and written in the pool-sync order: deletes (with UID and
resourceVersion preconditions), updates, creates.
"""

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from kubernetes import client
from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube.retry import with_retries
from npu_dra.adapters.cluster.kube.watch import SliceWatch
from npu_dra.adapters.kube_shapes.claims import claim_from_api, device_class_from_api
from npu_dra.adapters.kube_shapes.slices import node_owner, slice_from_api, slice_to_api
from npu_dra.domain.claims import ClaimRef, DeviceClass, ResourceClaim
from npu_dra.domain.errors import NotFound
from npu_dra.domain.ids import DeviceClassName, DriverName, NodeName
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.pool_sync import plan_sync
from npu_dra.domain.ports import Stoppable

log = logging.getLogger(__name__)
REQUEST_TIMEOUT = (5, 30)  # connect, read seconds


class KubeCluster:
    def __init__(self, api: client.ApiClient, *, retry_budget_s: float = 30.0) -> None:
        self._api = api
        # Typed as Any: we send dict bodies and read raw responses, which the stubs do not model.
        self._resource: Any = client.ResourceV1Api(api)
        self._core: Any = client.CoreV1Api(api)
        self._budget = retry_budget_s

    def publish_pool(
        self, *, node: NodeName, driver: DriverName, slices: Sequence[ResourceSlice]
    ) -> tuple[ResourceSlice, ...]:
        return with_retries(
            f"publishing ResourceSlices of {node}/{driver}",
            lambda: self._sync(node, driver, slices),
            budget_s=self._budget,
        )

    def list_slices(
        self, *, driver: DriverName | None = None, node: NodeName | None = None
    ) -> tuple[ResourceSlice, ...]:
        return tuple(slice_from_api(o) for o in self._raw_slices(driver, node))

    def watch_slices(
        self, *, node: NodeName, driver: DriverName, on_change: Callable[[], None]
    ) -> Stoppable:
        return SliceWatch(
            self._api, selector=f"spec.driver={driver},spec.nodeName={node}", on_change=on_change
        )

    def get_claim(self, *, ref: ClaimRef) -> ResourceClaim:
        obj = self._read(
            f"ResourceClaim {ref.namespace}/{ref.name}",
            lambda: self._resource.read_namespaced_resource_claim(
                ref.name, ref.namespace, _preload_content=False, _request_timeout=REQUEST_TIMEOUT
            ),
        )
        if obj["metadata"].get("uid") != ref.uid:
            raise NotFound(f"ResourceClaim {ref}: replaced, now UID {obj['metadata'].get('uid')}")
        return claim_from_api(obj)

    def get_device_class(self, *, name: DeviceClassName) -> DeviceClass:
        obj = self._read(
            f"DeviceClass {name}",
            lambda: self._resource.read_device_class(
                name, _preload_content=False, _request_timeout=REQUEST_TIMEOUT
            ),
        )
        return device_class_from_api(obj)

    def _sync(
        self, node: NodeName, driver: DriverName, desired: Sequence[ResourceSlice]
    ) -> tuple[ResourceSlice, ...]:
        raw = {o["metadata"]["name"]: o for o in self._raw_slices(driver, node)}
        plan = plan_sync([slice_from_api(o) for o in raw.values()], desired)
        if plan.empty:
            return tuple(slice_from_api(o) for o in raw.values())
        owner = self._owner(node)
        for name in plan.deletes:
            self._delete(raw[name])
        for s in plan.updates:
            body = slice_to_api(s, owner=owner)
            body["metadata"] = {**raw[s.name or ""]["metadata"], **body["metadata"]}
            self._resource.replace_resource_slice(s.name, body, _request_timeout=REQUEST_TIMEOUT)
        for s in plan.creates:
            self._resource.create_resource_slice(
                slice_to_api(s, owner=owner), _request_timeout=REQUEST_TIMEOUT
            )
        log.info(
            "synced pool %s: %d deleted, %d updated, %d created",
            node,
            len(plan.deletes),
            len(plan.updates),
            len(plan.creates),
        )
        return self.list_slices(driver=driver, node=node)

    def _delete(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        preconditions = {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}
        try:
            self._resource.delete_resource_slice(
                meta["name"],
                body={"preconditions": preconditions},
                _request_timeout=REQUEST_TIMEOUT,
            )
        except ApiException as error:
            if error.status != 404:  # already gone is what we wanted
                raise

    def _owner(self, node: NodeName) -> dict[str, Any] | None:
        try:
            found = self._core.read_node(
                node, _preload_content=False, _request_timeout=REQUEST_TIMEOUT
            )
        except ApiException as error:
            if error.status != 404:
                raise
            log.warning("node %s not found: publishing slices without an owner", node)
            return None
        return node_owner(node, json.loads(found.data)["metadata"]["uid"])

    def _raw_slices(self, driver: DriverName | None, node: NodeName | None) -> list[dict[str, Any]]:
        selector = ",".join(
            f"{k}={v}" for k, v in (("spec.driver", driver), ("spec.nodeName", node)) if v
        )
        response = with_retries(
            "listing ResourceSlices",
            lambda: self._resource.list_resource_slice(
                field_selector=selector, _preload_content=False, _request_timeout=REQUEST_TIMEOUT
            ),
            budget_s=self._budget,
        )
        items: list[dict[str, Any]] = json.loads(response.data)["items"]
        return sorted(items, key=lambda o: str(o["metadata"]["name"]))

    def _read(self, what: str, call: Any) -> dict[str, Any]:
        def fetch() -> dict[str, Any]:
            try:
                obj: dict[str, Any] = json.loads(call().data)
            except ApiException as error:
                if error.status == 404:
                    raise NotFound(f"{what} not found") from error
                raise
            return obj

        return with_retries(f"reading {what}", fetch, budget_s=self._budget)
