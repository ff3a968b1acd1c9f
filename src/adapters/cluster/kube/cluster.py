"""KubeCluster: publishes a node's pool and reads claims on a real API server (resource.k8s.io/v1).

Objects travel as plain dicts (`_preload_content=False`, dict bodies) so they pass through the same
shape code as the in-memory API; the client's generated models would silently drop fields they do
not know. Slices are selected by the `spec.driver`/`spec.nodeName` field selectors, owned by the
Node (garbage-collected with it), and written in the pool-sync order (pool_writes.py).
"""

import copy
import functools
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from kubernetes import client
from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube.pool_writes import PoolWriter
from npu_dra.adapters.cluster.kube.raw import RawResourceApi, raw_call
from npu_dra.adapters.cluster.kube.retry import Deadline, with_retries
from npu_dra.adapters.cluster.kube.watch import slice_watch
from npu_dra.adapters.kube_shapes.claims import device_class_from_api
from npu_dra.adapters.kube_shapes.opaque_cut import claim_from_json
from npu_dra.adapters.kube_shapes.slices import node_owner, slice_from_api
from npu_dra.domain.claims import ClaimRef, DeviceClass, NodePod, ResourceClaim
from npu_dra.domain.errors import NotFound
from npu_dra.domain.ids import ClaimName, DeviceClassName, DriverName, Namespace, NodeName
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.ports import Stoppable

log = logging.getLogger(__name__)
T = TypeVar("T")
PROBE_BUDGET_S = 5.0  # asking whether the server keeps counters: a probe waits no longer


def single_try(api: client.ApiClient) -> client.ApiClient:
    """A client on the same configuration whose requests are tried once: retries are ours,
    bounded by the budget; urllib3's own (3 by default) would multiply every timeout by four."""
    if api.configuration.retries is False:
        return api
    configuration = copy.deepcopy(api.configuration)
    configuration.retries = False
    return client.ApiClient(configuration)


class KubeCluster:
    """`read_budget_s` bounds a single-object read, retries and each request's timeout
    included (default: `retry_budget_s`). The kubelet plugin gives it the claim-read deadline:
    a read stuck in a hung server is then abandoned, its connection closed, when the prepare
    waiting for it gives up, instead of holding a reader (and the connection) longer."""

    def __init__(
        self,
        api: client.ApiClient,
        *,
        retry_budget_s: float = 30.0,
        read_budget_s: float | None = None,
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        self._api = single_try(api)
        self._budget = retry_budget_s
        self._read_budget = retry_budget_s if read_budget_s is None else read_budget_s
        self._on_retry = on_retry  # hears the operation of each retried API call

    def _retries(self, operation: str) -> Callable[[], None] | None:
        hear = self._on_retry
        return None if hear is None else lambda: hear(operation)

    # The generated API classes are never named: naming one imports its module and models (the
    # Node read's CoreV1Api alone takes over a second of CPU). Resource calls go through
    # RawResourceApi, the Node read through the bare client.
    @functools.cached_property
    def _resource(self) -> RawResourceApi:
        return RawResourceApi(self._api)

    @functools.cached_property
    def _writer(self) -> PoolWriter:
        return PoolWriter(self._resource, self._list, self._owner)

    def publish_pool(
        self, *, node: NodeName, driver: DriverName, slices: Sequence[ResourceSlice]
    ) -> tuple[ResourceSlice, ...]:
        return with_retries(
            f"publishing ResourceSlices of {node}/{driver}",
            lambda deadline: self._writer.sync(deadline, node, driver, slices),
            budget_s=self._budget,
            on_retry=self._retries("publish_slices"),
        )

    def list_slices(
        self, *, driver: DriverName | None = None, node: NodeName | None = None
    ) -> tuple[ResourceSlice, ...]:
        found = with_retries(
            "listing ResourceSlices",
            lambda deadline: self._list(deadline, driver, node),
            budget_s=self._budget,
            on_retry=self._retries("list_slices"),
        )
        return tuple(slice_from_api(o) for o in found)

    def partitionable_layout(self, *, node: NodeName, driver: DriverName) -> str | None:
        """Where the server keeps counter sets, None if nowhere (see partitionable_probe)."""
        from npu_dra.adapters.cluster.kube.partitionable_probe import counter_layout

        return with_retries(
            "probing for partitionable devices",
            lambda deadline: counter_layout(
                self._resource, node=node, driver=driver, timeout=deadline.timeout()
            ),
            budget_s=min(self._budget, PROBE_BUDGET_S),
            on_retry=self._retries("probe_partitions"),
        )

    def watch_slices(
        self, *, node: NodeName, driver: DriverName, on_change: Callable[[], None]
    ) -> Stoppable:
        return slice_watch(
            self._api, selector=f"spec.driver={driver},spec.nodeName={node}", on_change=on_change
        )

    def get_claim(self, *, ref: ClaimRef) -> ResourceClaim:
        claim = self.read_claim(namespace=ref.namespace, name=ref.name)
        if claim.ref.uid != ref.uid:
            raise NotFound(f"ResourceClaim {ref}: replaced, now UID {claim.ref.uid}")
        return claim

    def read_claim(self, *, namespace: Namespace, name: ClaimName) -> ResourceClaim:
        return self._read(
            f"ResourceClaim {namespace}/{name}",
            lambda timeout: self._resource.read_namespaced_resource_claim(
                name, namespace, _preload_content=False, _request_timeout=timeout
            ),
            claim_from_json,
        )

    def watch_node_pods(
        self,
        *,
        node: NodeName,
        on_list: Callable[[Sequence[NodePod]], None],
        on_pod: Callable[[NodePod], None],
    ) -> Stoppable:
        from npu_dra.adapters.cluster.kube.node_pods import node_pod_watch

        return node_pod_watch(self._api, node=node, on_list=on_list, on_pod=on_pod)

    def get_device_class(self, *, name: DeviceClassName) -> DeviceClass:
        obj: dict[str, Any] = self._read(
            f"DeviceClass {name}",
            lambda timeout: self._resource.read_device_class(
                name, _preload_content=False, _request_timeout=timeout
            ),
        )
        return device_class_from_api(obj)

    def node_exists(self, *, node: NodeName) -> bool:
        return self.kubelet_version(node=node) is not None

    def kubelet_version(self, *, node: NodeName) -> str | None:
        def fetch(deadline: Deadline) -> str | None:
            try:
                found = self._read_node(node, deadline.timeout())
            except ApiException as error:
                if error.status == 404:
                    return None
                raise
            status = found.get("status") or {}
            return str((status.get("nodeInfo") or {}).get("kubeletVersion") or "")

        return with_retries(
            f"reading Node {node}",
            fetch,
            budget_s=self._read_budget,
            on_retry=self._retries("read"),
        )

    def _owner(self, deadline: Deadline, node: NodeName) -> dict[str, Any] | None:
        try:
            found = self._read_node(node, deadline.timeout())
        except ApiException as error:
            if error.status != 404:
                raise
            log.error(
                "Node %s does not exist: --node-name (NODE_NAME) must be this node's name as the "
                "API server knows it; publishing slices without an owner meanwhile",
                node,
            )
            return None
        return node_owner(node, found["metadata"]["uid"])

    def _read_node(self, node: NodeName, timeout: float) -> dict[str, Any]:
        api: Any = self._api
        if not hasattr(api, "param_serialize"):  # a client older than its pydantic generator
            core: Any = client.CoreV1Api(api)
            found = core.read_node(node, _preload_content=False, _request_timeout=timeout)
            return dict(json.loads(found.data))
        response = raw_call(api, "GET", "/api/v1/nodes/{name}", {"name": node}, timeout)
        return dict(json.loads(response.data))

    def _list(
        self, deadline: Deadline, driver: DriverName | None, node: NodeName | None
    ) -> list[dict[str, Any]]:
        selector = ",".join(
            f"{k}={v}" for k, v in (("spec.driver", driver), ("spec.nodeName", node)) if v
        )
        response = self._resource.list_resource_slice(
            field_selector=selector, _preload_content=False, _request_timeout=deadline.timeout()
        )
        items: list[dict[str, Any]] = json.loads(response.data)["items"]
        return sorted(items, key=lambda o: str(o["metadata"]["name"]))

    def _read(
        self, what: str, call: Callable[[float], Any], parse: Callable[[bytes], T] = json.loads
    ) -> T:
        def fetch(deadline: Deadline) -> T:
            try:
                obj = parse(call(deadline.timeout()).data)
            except ApiException as error:
                if error.status == 404:
                    raise NotFound(f"{what} not found") from error
                raise
            return obj

        return with_retries(
            f"reading {what}", fetch, budget_s=self._read_budget, on_retry=self._retries("read")
        )
