"""An informer's list-then-watch of objects chosen by a field selector, on a thread of its own.

List (which yields a resourceVersion) and hand the listed document to `on_list`, then watch from
that version, so a change made between the list and the watch's start is still delivered, and
hand each event's type and raw object to `on_event`. The watch resumes from the last version it
saw (bookmarks keep that fresh) and lists again after an error or expiry (410). `list_call` is a
raw list method shaped as the generated client's (raw.py): it answers the urllib3 response, and
kubernetes' Watch can stream it (no model to decode: events carry raw objects).

Every watch of the plugin (its DaemonSet, its ResourceSlices, the prefetch's pods) runs here, so
they share one back-off policy (domain/backoff.py: 0.5 s doubling to 30 s, spread ± 20 %): after
a failure, and after a watch the server ended at once (within SHORT_WATCH_S, no event): an empty
200 is no error, but reopened at once it made one watch cost ~650 requests/s and 70 % of a core
(client-go's reflector treats it alike, a "very short watch"). A watch that delivered an event
or lasted its while is reopened at once. The log says what happened the 1st, 2nd, 4th, 8th ...
time in a row, so a server that keeps doing it fills no log.
"""

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kubernetes import watch

from npu_dra.adapters.cluster.kube.retry import describe
from npu_dra.domain.backoff import Backoff

log = logging.getLogger(__name__)
WATCH_TIMEOUT_S = 300
LIST_TIMEOUT_S = 30.0
FIRST_BACKOFF_S, MAX_BACKOFF_S = 0.5, 30.0
SHORT_WATCH_S = 1.0  # a watch ended sooner without an event was ended at once (client-go's)
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
        backoff = Backoff(FIRST_BACKOFF_S, MAX_BACKOFF_S)
        repeats = _Repeats(self._what)
        version: str | None = None
        while not self._stopped.is_set():
            try:
                version = version or self._list()
                started = time.monotonic()
                version, events = self._stream(version)
            except Exception as error:  # any failure: log, back off, list again
                if self._stopped.is_set():
                    return
                wait = backoff.next()
                why = describe(error)  # an ApiException's own text is its headers too
                repeats.say("failed", f"failed: {why}; listing again in {wait:.1f} s")
                version = None
                self._stopped.wait(wait)
                continue
            if self._stopped.is_set():  # stop() ended the stream: nothing to say
                return
            if events or time.monotonic() - started >= SHORT_WATCH_S:
                backoff.reset()
                repeats.clear()
                continue
            wait = backoff.next()
            said = "the server ended the watch at once, without an event"
            repeats.say("at once", f"{said}; reopening in {wait:.1f} s")
            self._stopped.wait(wait)

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

    def _stream(self, version: str) -> tuple[str | None, int]:
        """Watches from `version`: the version to resume from (None: list again), and how many
        events the server sent."""
        events = self._watch.stream(
            self._list_call,
            *self._args,
            field_selector=self._selector,
            resource_version=version,
            allow_watch_bookmarks=True,
            timeout_seconds=WATCH_TIMEOUT_S,
            _request_timeout=(LIST_TIMEOUT_S, WATCH_TIMEOUT_S + LIST_TIMEOUT_S),
        )
        seen = 0
        for event in events:
            kind = str(event.get("type"))
            if kind == "ERROR":
                return None, seen  # e.g. 410 Gone: list again
            seen += 1
            raw = event.get("raw_object") or {}
            version = (raw.get("metadata") or {}).get("resourceVersion", version)
            if kind != "BOOKMARK" and not self._stopped.is_set():
                self._on_event(kind, raw)
        return version, seen


class _Repeats:
    """What went wrong with a watch, logged the 1st, 2nd, 4th, 8th ... time in a row."""

    def __init__(self, what: str) -> None:
        self._what, self._last, self._count = what, "", 0

    def say(self, key: str, message: str) -> None:
        self._count = self._count + 1 if key == self._last else 1
        self._last = key
        if self._count & (self._count - 1) == 0:
            again = f" ({self._count} times in a row)" if self._count > 1 else ""
            log.warning("watching %s: %s%s", self._what, message, again)

    def clear(self) -> None:
        self._last, self._count = "", 0
