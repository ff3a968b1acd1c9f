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
from npu_dra.adapters.cluster.kube.raw import list_query, raw_call


class RawDaemonSets:
    """The one apps/v1 call made, on the ApiClient without the generated AppsV1Api (whose models
    cost start-up time: raw.py); named and shaped as AppsV1Api's, so Watch can stream it."""

    def __init__(self, api: client.ApiClient) -> None:
        self._api = api

    def list_namespaced_daemon_set(
        self,
        namespace: str,
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
        path = "/apis/apps/v1/namespaces/{namespace}/daemonsets"
        params = {"namespace": namespace}
        return raw_call(self._api, "GET", path, params, _request_timeout, query=query)


class KubeDaemonSetWatcher:
    def __init__(self, api: client.ApiClient) -> None:
        self._apps = RawDaemonSets(api)

    def watch_daemonset(
        self, *, namespace: str, name: str, on_report: Callable[[bool], None]
    ) -> ListWatch:
        return daemonset_watch(self._apps, namespace=namespace, name=name, on_report=on_report)


def standing(obj: Mapping[str, Any]) -> bool:
    """Whether a DaemonSet as the API serves it is not being deleted."""
    return not (obj.get("metadata") or {}).get("deletionTimestamp")


def daemonset_watch(
    apps: RawDaemonSets, *, namespace: str, name: str, on_report: Callable[[bool], None]
) -> ListWatch:
    def listed(found: Document) -> None:
        items = found.get("items") or []
        on_report(bool(items) and all(standing(item) for item in items))

    def changed(kind: str, raw: Document) -> None:
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            on_report(kind != "DELETED" and standing(raw))

    return ListWatch(
        apps.list_namespaced_daemon_set,
        namespace,
        selector=f"metadata.name={name}",
        what=f"DaemonSet {namespace}/{name}",
        on_list=listed,
        on_event=changed,
    )
