"""Watching our own ResourceSlices, so that slices someone deleted come back at once.

The kubelet deletes all of a node's slices when it restarts, and wipes a driver's slices 30 s
after its endpoints disconnect; polling would leave the node's NPUs unschedulable until the next
poll. A watch with the node/driver field selector wakes the publisher instead. The watch resumes
from the last resourceVersion and restarts with back-off after errors or expiry (410).
"""

import logging
import threading
from collections.abc import Callable
from typing import Any

from kubernetes import client, watch

log = logging.getLogger(__name__)
WATCH_TIMEOUT_S = 300
MAX_BACKOFF_S = 30.0


class SliceWatch:
    def __init__(
        self, api: client.ApiClient, *, selector: str, on_change: Callable[[], None]
    ) -> None:
        self._resource: Any = client.ResourceV1Api(api)
        self._selector = selector
        self._on_change = on_change
        self._stopped = threading.Event()
        self._watch: Any = watch.Watch()  # type: ignore[no-untyped-call]
        self._thread = threading.Thread(target=self._run, name="slice-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._watch.stop()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        backoff = 0.5
        version: str | None = None
        while not self._stopped.is_set():
            try:
                version = self._stream(version)
                backoff = 0.5
            except Exception as error:  # any failure: log, back off, list again
                log.warning("watching ResourceSlices (%s) failed: %s", self._selector, error)
                version = None
                self._stopped.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)

    def _stream(self, version: str | None) -> str | None:
        kwargs: dict[str, Any] = {
            "field_selector": self._selector,
            "timeout_seconds": WATCH_TIMEOUT_S,
        }
        if version:
            kwargs["resource_version"] = version
        else:
            self._on_change()  # a fresh watch may have missed changes: sync once
        for event in self._watch.stream(self._resource.list_resource_slice, **kwargs):
            raw = event.get("raw_object") or {}
            if event.get("type") == "ERROR":
                return None  # e.g. 410 Gone: list again
            version = (raw.get("metadata") or {}).get("resourceVersion", version)
            if event.get("type") in ("DELETED", "MODIFIED"):
                self._on_change()
            if self._stopped.is_set():
                break
        return version
