"""Watching our own ResourceSlices, so that slices someone deleted come back at once.

The kubelet deletes all of a node's slices when it restarts, and wipes a driver's slices 30 s
after its endpoints disconnect; polling would leave the node's NPUs unschedulable until the next
poll. A watch with the node/driver field selector wakes the publisher instead.

It is an informer's list-then-watch: list (which yields a resourceVersion), call `on_change` once
(the pool may have changed while nobody watched), then watch from that version, so a change made
between the list and the watch's start is still delivered. The watch resumes from the last
version it saw (bookmarks keep that fresh) and lists again after errors or expiry (410).
"""

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from kubernetes import client, watch

from npu_dra.adapters.cluster.kube.raw import RawResourceApi

log = logging.getLogger(__name__)
WATCH_TIMEOUT_S = 300
LIST_TIMEOUT_S = 30.0
MAX_BACKOFF_S = 30.0


class SliceWatch:
    def __init__(
        self, api: client.ApiClient, *, selector: str, on_change: Callable[[], None]
    ) -> None:
        self._resource = RawResourceApi(api)
        self._selector = selector
        self._on_change = on_change
        self._stopped = threading.Event()
        self._watch: Any = watch.Watch()  # type: ignore[no-untyped-call]
        self._thread = threading.Thread(target=self._run, name="slice-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """No on_change call starts after this returns (one in progress may finish)."""
        self._stopped.set()
        self._watch.stop()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        backoff = 0.5
        version: str | None = None
        while not self._stopped.is_set():
            try:
                version = self._stream(version or self._list())
                backoff = 0.5
            except Exception as error:  # any failure: log, back off, list again
                if self._stopped.is_set():
                    return
                log.warning("watching ResourceSlices (%s) failed: %s", self._selector, error)
                version = None
                self._stopped.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)

    def _list(self) -> str:
        """Lists, then tells the owner to sync once; the version to watch from."""
        response = self._resource.list_resource_slice(
            field_selector=self._selector,
            _preload_content=False,
            _request_timeout=LIST_TIMEOUT_S,
        )
        version = str(json.loads(response.data)["metadata"]["resourceVersion"])
        self._notify()
        return version

    def _stream(self, version: str) -> str | None:
        """Watches from `version`; the version to resume from, or None to list again."""
        events = self._watch.stream(
            self._resource.list_resource_slice,
            field_selector=self._selector,
            resource_version=version,
            allow_watch_bookmarks=True,
            timeout_seconds=WATCH_TIMEOUT_S,
            _request_timeout=(LIST_TIMEOUT_S, WATCH_TIMEOUT_S + LIST_TIMEOUT_S),
        )
        for event in events:
            if event.get("type") == "ERROR":
                return None  # e.g. 410 Gone: list again
            raw = event.get("raw_object") or {}
            version = (raw.get("metadata") or {}).get("resourceVersion", version)
            if event.get("type") in ("ADDED", "DELETED", "MODIFIED"):
                self._notify()
        return version

    def _notify(self) -> None:
        if not self._stopped.is_set():
            self._on_change()
