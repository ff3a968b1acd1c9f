"""A bound on the long-lived server streams one gRPC server runs.

A sync gRPC server runs every call, streams included, on its fixed pool of worker threads, and
a stream holds its thread for as long as it is open. The kubelet opens one stream per plugin
(DRAResourceHealth, ListAndWatch), so a handful of extra streams (a kubelet restart's leftovers,
a misbehaving client) would otherwise take every thread and starve the unary calls the kubelet
needs: NodePrepareResources, Allocate. With at most `most` streams open, a server with more
workers than that always has threads for unary calls; a stream past the bound is refused at once
with RESOURCE_EXHAUSTED, and a stream whose client went away frees its slot at once.
"""

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import grpc


class StreamLimit:
    def __init__(self, most: int, *, what: str) -> None:
        self.most = most
        self._what = what
        self._open = 0
        self._lock = threading.Lock()

    @property
    def open(self) -> int:
        with self._lock:
            return self._open

    @contextlib.contextmanager
    def slot(self, context: Any) -> Iterator[None]:
        """Hold a slot for the stream's life, or abort the call if none is free."""
        with self._lock:
            full = self._open >= self.most
            if not full:
                self._open += 1
        if full:
            context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{self._what}: {self.most} stream(s) already open; close one first",
            )
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1
