"""The one asyncio event loop the plugin's gRPC servers run on, on a thread of its own.

Why not grpcio's threaded server: each `grpc.server` keeps a thread that polls its completion
queue and returns every 200 ms to check for signals (grpc/_cython/_cygrpc/completion_queue.pyx.pxi,
`_INTERRUPT_CHECK_PERIOD_MS`, grpcio 1.85), and with two such servers in a process both woke 10
times a second: 37 ms of CPU per idle minute of the chart's plugin, more than the Go driver spends
in all (issue 49). A `grpc.aio` server waits for work in the C core without waking: its poller
thread (grpc/_cython/_cygrpc/aio/completion_queue.pyx.pxi, `PollerCompletionQueue`, one per
process) blocks until a call arrives, and this loop sleeps on its socket.

The servicers stay synchronous: adapters/grpc/sync_bridge runs each call on the server's worker
pool, as the threaded server did. Every aio object is made and used on this loop's thread only
(grpc.aio's rule); other threads hand it work with `run`.
"""

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent import futures
from typing import Any, TypeVar

T = TypeVar("T")

LOOP_THREAD = "grpc-loop"
POLLER_THREAD = "grpc-poller"
POLLER_TARGET = "_poll_wrapper"  # grpc.aio's PollerCompletionQueue thread target, unnamed

_lock = threading.Lock()
_running: list[asyncio.AbstractEventLoop] = []  # the one loop, once started


def loop() -> asyncio.AbstractEventLoop:
    """The loop, started on its thread at the first call; it runs for the process's life (a
    daemon thread that costs nothing while no call arrives)."""
    with _lock:
        if not _running:
            started = asyncio.new_event_loop()
            thread = threading.Thread(target=started.run_forever, name=LOOP_THREAD, daemon=True)
            thread.start()
            _running.append(started)
        return _running[0]


def run(make: Callable[[], Coroutine[Any, Any, T]], timeout: float | None = None) -> T:
    """`make()`'s coroutine run on the loop; its result or its exception, here. Not to be called
    from the loop's own thread (it would wait on itself)."""
    if threading.current_thread().name == LOOP_THREAD:
        raise RuntimeError("aio_loop.run called on the loop's own thread")
    future: futures.Future[T] = asyncio.run_coroutine_threadsafe(_made(make), loop())
    try:
        return future.result(timeout)
    finally:
        _name_poller()


async def _made(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return await make()


def _name_poller() -> None:
    """grpc.aio starts its poller thread with its first server (and again with the next one
    once every server has gone), unnamed ("Thread-N (_poll_wrapper)"); it gets a name that says
    what it is, for the count of threads."""
    for thread in threading.enumerate():
        target = getattr(thread, "_target", None)  # threading.Thread keeps it while running
        if getattr(target, "__name__", "") == POLLER_TARGET:
            thread.name = POLLER_THREAD
