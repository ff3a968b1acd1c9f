"""A bound on the long-lived server streams one gRPC server runs.

A sync gRPC server runs every call, streams included, on its fixed pool of worker threads, and
a stream holds its thread for as long as it is open. The kubelet opens one stream per plugin
(DRAResourceHealth, ListAndWatch), so a handful of extra streams (a kubelet restart's leftovers,
a misbehaving client) would otherwise take every thread and starve the unary calls the kubelet
needs: NodePrepareResources, Allocate. With at most `most` streams open, a server with more
workers than that always has threads for unary calls; a stream past the bound is refused at once
with RESOURCE_EXHAUSTED, and a stream whose client went away frees its slot at once.

A bound alone lets one client keep every slot for good, and the kubelet's own stream out with
them. With `yield_after_s`, a stream open that long gives its slot up to a newcomer (the one
open longest is cancelled): a client holding every slot keeps the kubelet, which retries its
stream every few seconds, out for at most that long. Clients over unix sockets cannot be told
apart (gRPC shows no peer credentials), so the newest stream is the one most likely to be the
kubelet's own, reconnecting.
"""

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc

log = logging.getLogger(__name__)


class _Held:
    __slots__ = ("context", "opened")

    def __init__(self, context: Any) -> None:
        self.context = context
        self.opened = time.monotonic()


class StreamLimit:
    def __init__(self, most: int, *, what: str, yield_after_s: float | None = None) -> None:
        self.most = most
        self._what = what
        self._yield_after = yield_after_s
        self._held: list[_Held] = []  # oldest first
        self._lock = threading.Lock()

    @property
    def open(self) -> int:
        with self._lock:
            return len(self._held)

    @contextlib.contextmanager
    def slot(self, context: Any) -> Iterator[None]:
        """Hold a slot for the stream's life, or abort the call if none is free."""
        me = _Held(context)
        with self._lock:
            displaced = self._make_room()
            full = len(self._held) >= self.most
            if not full:
                self._held.append(me)
        if displaced is not None:
            log.warning(
                "%s: %d stream(s) open; ended the one open %.0fs for a new one",
                self._what,
                self.most,
                me.opened - displaced.opened,
            )
            displaced.context.cancel()
        if full:
            context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{self._what}: {self.most} stream(s) already open; close one first",
            )
        try:
            yield
        finally:
            with self._lock:
                if me in self._held:  # not displaced meanwhile
                    self._held.remove(me)

    def _make_room(self) -> _Held | None:
        """With every slot taken, the stream open longest if it is old enough to yield
        (holding the lock)."""
        if self._yield_after is None or len(self._held) < self.most:
            return None
        if time.monotonic() - self._held[0].opened < self._yield_after:
            return None
        return self._held.pop(0)
