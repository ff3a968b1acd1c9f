"""Watching the DaemonSet that runs the kubelet plugin, so that the plugin knows, when SIGTERM
comes, whether it is being uninstalled (app/services/uninstall.py).

One object, by a field selector on metadata.name (so RBAC can grant it by resourceNames), as an
informer does (list_watch.py): standing or not once listed, then after each change. The
watch is opened at start on purpose: an uninstall deletes the plugin's RBAC and ServiceAccount
within milliseconds of its DaemonSet, before the pod gets SIGTERM, and an open watch is not
authorized again, so it still delivers the deletion.
"""

from collections.abc import Callable, Mapping
from typing import Any

from kubernetes import client

from npu_dra.adapters.cluster.kube.list_watch import Document, ListWatch
from npu_dra.adapters.cluster.kube.raw import RawList


class KubeDaemonSetWatcher:
    def __init__(self, api: client.ApiClient) -> None:
        self._api = api

    def watch_daemonset(
        self, *, namespace: str, name: str, on_report: Callable[[bool], None]
    ) -> ListWatch:
        return daemonset_watch(self._api, namespace=namespace, name=name, on_report=on_report)


def standing(obj: Mapping[str, Any]) -> bool:
    """Whether a DaemonSet as the API serves it is not being deleted."""
    return not (obj.get("metadata") or {}).get("deletionTimestamp")


def daemonset_watch(
    api: client.ApiClient, *, namespace: str, name: str, on_report: Callable[[bool], None]
) -> ListWatch:
    def listed(found: Document) -> None:
        items = found.get("items") or []
        on_report(bool(items) and all(standing(item) for item in items))

    def changed(kind: str, raw: Document) -> None:
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            on_report(kind != "DELETED" and standing(raw))

    # The one apps/v1 call, without the generated AppsV1Api (whose models cost start-up time).
    return ListWatch(
        RawList(api, "/apis/apps/v1/namespaces/{namespace}/daemonsets", {"namespace": namespace}),
        selector=f"metadata.name={name}",
        what=f"DaemonSet {namespace}/{name}",
        on_list=listed,
        on_event=changed,
    )
