"""Watching the DaemonSet that runs the kubelet plugin, so that the plugin knows, when SIGTERM
comes, whether it is being uninstalled (app/services/uninstall.py).

One object, by a field selector on metadata.name (so RBAC can grant it by resourceNames), as an
informer does: list (standing or not, and a resourceVersion), then watch from that version; the
watch resumes from the last version it saw and lists again after an error or expiry (410). The
watch is opened at start on purpose: an uninstall deletes the plugin's RBAC and ServiceAccount
within milliseconds of its DaemonSet, before the pod gets SIGTERM, and an open watch is not
authorized again, so it still delivers the deletion.
"""

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubernetes import client, watch

from npu_dra.adapters.cluster.kube.raw import list_query, raw_call

log = logging.getLogger(__name__)
WATCH_TIMEOUT_S = 300
LIST_TIMEOUT_S = 30.0
FIRST_BACKOFF_S, MAX_BACKOFF_S = 0.5, 30.0


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
    ) -> "DaemonSetWatch":
        return DaemonSetWatch(self._apps, namespace=namespace, name=name, on_report=on_report)


def standing(obj: Mapping[str, Any]) -> bool:
    """Whether a DaemonSet as the API serves it is not being deleted."""
    return not (obj.get("metadata") or {}).get("deletionTimestamp")


class DaemonSetWatch:
    def __init__(
        self,
        apps: RawDaemonSets,
        *,
        namespace: str,
        name: str,
        on_report: Callable[[bool], None],
    ) -> None:
        self._apps, self._namespace = apps, namespace
        self._selector = f"metadata.name={name}"
        self._what = f"DaemonSet {namespace}/{name}"
        self._on_report = on_report
        self._stopped = threading.Event()
        self._watch: Any = watch.Watch()  # type: ignore[no-untyped-call]
        self._thread = threading.Thread(target=self._run, name="daemonset-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """No report starts after this returns (one in progress may finish)."""
        self._stopped.set()
        self._watch.stop()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        backoff = FIRST_BACKOFF_S
        version: str | None = None
        while not self._stopped.is_set():
            try:
                version = self._stream(version or self._list())
                backoff = FIRST_BACKOFF_S
            except Exception as error:  # any failure: log, back off, list again
                if self._stopped.is_set():
                    return
                log.warning("watching %s failed: %s", self._what, error)
                version = None
                self._stopped.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)

    def _list(self) -> str:
        """Lists, reports what it found; the version to watch from."""
        response: Any = self._apps.list_namespaced_daemon_set(
            self._namespace,
            field_selector=self._selector,
            _preload_content=False,
            _request_timeout=LIST_TIMEOUT_S,
        )
        found = json.loads(response.data)
        items = found.get("items") or []
        self._report(bool(items) and all(standing(item) for item in items))
        return str(found["metadata"]["resourceVersion"])

    def _stream(self, version: str) -> str | None:
        """Watches from `version`; the version to resume from, or None to list again."""
        events = self._watch.stream(
            self._apps.list_namespaced_daemon_set,
            self._namespace,
            field_selector=self._selector,
            resource_version=version,
            allow_watch_bookmarks=True,
            timeout_seconds=WATCH_TIMEOUT_S,
            _request_timeout=(LIST_TIMEOUT_S, WATCH_TIMEOUT_S + LIST_TIMEOUT_S),
        )
        for event in events:
            kind = event.get("type")
            if kind == "ERROR":
                return None  # e.g. 410 Gone: list again
            raw = event.get("raw_object") or {}
            version = (raw.get("metadata") or {}).get("resourceVersion", version)
            if kind == "DELETED":
                self._report(False)
            elif kind in ("ADDED", "MODIFIED"):
                self._report(standing(raw))
        return version

    def _report(self, standing: bool) -> None:
        if not self._stopped.is_set():
            self._on_report(standing)
