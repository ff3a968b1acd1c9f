"""Watching the pods bound to this node, for the claim prefetch (app/services/claim_prefetch.py).

The same field-selected list-then-watch the kubelet runs (`spec.nodeName=<node>`, all
namespaces, list_watch.py). Only what the prefetch needs is kept of each pod: its UID, the
claims generated for it (status.resourceClaimStatuses) and whether it is done (deleted, being
deleted, or in a terminal phase). RBAC: list and watch on pods, cluster-wide (README
"Claim prefetch").
"""

from collections.abc import Callable, Sequence
from typing import Any

from kubernetes import client

from npu_dra.adapters.cluster.kube.list_watch import Document, ListWatch
from npu_dra.adapters.cluster.kube.raw import list_query, raw_call
from npu_dra.adapters.kube_shapes.pods import node_pod
from npu_dra.domain.claims import NodePod
from npu_dra.domain.ids import NodeName


class RawPods:
    """The one core/v1 call made, without the generated CoreV1Api (whose models cost start-up
    time: raw.py); named and shaped as CoreV1Api's, so Watch can stream it."""

    def __init__(self, api: client.ApiClient) -> None:
        self._api = api

    def list_pod_for_all_namespaces(
        self,
        *,
        field_selector: str | None = None,
        resource_version: str | None = None,
        allow_watch_bookmarks: bool | None = None,
        timeout_seconds: int | None = None,
        watch: bool | None = None,
        _request_timeout: Any = None,
        _preload_content: bool = False,
    ) -> Any:
        query = list_query(
            field_selector, resource_version, allow_watch_bookmarks, timeout_seconds, watch
        )
        return raw_call(self._api, "GET", "/api/v1/pods", {}, _request_timeout, query=query)


def node_pod_watch(
    api: client.ApiClient,
    *,
    node: NodeName,
    on_list: Callable[[Sequence[NodePod]], None],
    on_pod: Callable[[NodePod], None],
) -> ListWatch:
    """`on_list` with every pod bound to `node` at each (re)list, then `on_pod` per change."""

    def listed(found: Document) -> None:
        pods = (node_pod(item) for item in found.get("items") or ())
        on_list([pod for pod in pods if pod is not None])

    def changed(kind: str, raw: Document) -> None:
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            pod = node_pod(raw, deleted=kind == "DELETED")
            if pod is not None:
                on_pod(pod)

    return ListWatch(
        RawPods(api).list_pod_for_all_namespaces,
        selector=f"spec.nodeName={node}",
        what=f"pods on {node} for --claim-prefetch (RBAC: list and watch on pods)",
        on_list=listed,
        on_event=changed,
    )
