"""An informer's list-then-watch of objects chosen by a field selector, on a thread of its own.

List (which yields a resourceVersion) and hand the listed document to `on_list`, then watch from
that version, so a change made between the list and the watch's start is still delivered, and
hand each event's type and raw object to `on_event`. The watch resumes from the last version it
saw (bookmarks keep that fresh) and lists again after an error or expiry (410); any failure is
logged and retried with back-off (0.5 s doubling to 30 s). `list_call` is a raw list method shaped
as the generated client's (raw.py): it answers the urllib3 response, and kubernetes' Watch can
stream it (no model to decode: events carry raw objects).
"""

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubernetes import watch

log = logging.getLogger(__name__)
WATCH_TIMEOUT_S = 300
LIST_TIMEOUT_S = 30.0
FIRST_BACKOFF_S, MAX_BACKOFF_S = 0.5, 30.0
Document = Mapping[str, Any]


class ListWatch:
    def __init__(
        self,
        list_call: Callable[..., Any],
        *args: str,
        selector: str,
        what: str,
        on_list: Callable[[Document], None],
        on_event: Callable[[str, Document], None],
    ) -> None:
        self._list_call, self._args = list_call, args
        self._selector, self._what = selector, what
        self._on_list, self._on_event = on_list, on_event
        self._stopped = threading.Event()
        self._watch: Any = watch.Watch()  # type: ignore[no-untyped-call]
        self._thread = threading.Thread(target=self._run, name=f"watch {what}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """No callback starts after this returns (one in progress may finish)."""
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
        """Lists and hands over what it found; the version to watch from."""
        response: Any = self._list_call(
            *self._args,
            field_selector=self._selector,
            _preload_content=False,
            _request_timeout=LIST_TIMEOUT_S,
        )
        found = json.loads(response.data)
        if not self._stopped.is_set():
            self._on_list(found)
        return str(found["metadata"]["resourceVersion"])

    def _stream(self, version: str) -> str | None:
        """Watches from `version`; the version to resume from, or None to list again."""
        events = self._watch.stream(
            self._list_call,
            *self._args,
            field_selector=self._selector,
            resource_version=version,
            allow_watch_bookmarks=True,
            timeout_seconds=WATCH_TIMEOUT_S,
            _request_timeout=(LIST_TIMEOUT_S, WATCH_TIMEOUT_S + LIST_TIMEOUT_S),
        )
        for event in events:
            kind = str(event.get("type"))
            if kind == "ERROR":
                return None  # e.g. 410 Gone: list again
            raw = event.get("raw_object") or {}
            version = (raw.get("metadata") or {}).get("resourceVersion", version)
            if kind != "BOOKMARK" and not self._stopped.is_set():
                self._on_event(kind, raw)
        return version
