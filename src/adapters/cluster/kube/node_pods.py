"""Watching the pods bound to this node, for the claim prefetch (app/services/claim_prefetch.py).

The same field-selected list-then-watch the kubelet runs (`spec.nodeName=<node>`, all
namespaces, list_watch.py). Only what the prefetch needs is kept of each pod: its UID, the
claims generated for it (status.resourceClaimStatuses) and whether it is done (deleted, being
deleted, or in a terminal phase). RBAC: list and watch on pods, cluster-wide (docs/operating.md
"Claim prefetch").
"""

from collections.abc import Callable, Sequence

from kubernetes import client

from npu_dra.adapters.cluster.kube.list_watch import Document, ListWatch
from npu_dra.adapters.cluster.kube.raw import RawList
from npu_dra.adapters.kube_shapes.pods import node_pod
from npu_dra.domain.claims import NodePod
from npu_dra.domain.ids import NodeName


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
        RawList(api, "/api/v1/pods"),
        selector=f"spec.nodeName={node}",
        what=f"pods on {node} for --claim-prefetch (RBAC: list and watch on pods)",
        on_list=listed,
        on_event=changed,
    )
