"""Synchronous servicers on a grpc.aio server (adapters/grpc/aio_loop.py says why aio).

The generated `add_*Servicer_to_server(servicer, server)` functions are handed a `Registrar`
instead of the server: each method handler they register is wrapped in a coroutine that runs the
servicer's method on the server's worker pool, with a `SyncContext` standing for the
`grpc.ServicerContext` the threaded server gave. Only what the servicers use is there:
`is_active`, `time_remaining`, `add_callback`, `cancel` and `abort`. grpc.aio's own
compatibility mode (`migration_thread_pool`) has neither `is_active` nor `cancel`, and runs
`add_callback`'s callbacks only once the method has returned, where a health stream waits for
them to return.

A call ends for the servicer (`is_active()` false, the callbacks run) when its coroutine ends for
any reason: answered, aborted, the client gone or its deadline passed (grpc.aio cancels the
coroutine), or `cancel()`.
"""

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent import futures
from typing import Any

import grpc

_END = object()


class _Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code, self.details = code, details


class SyncContext:
    """A call's context as a synchronous servicer method sees it, from a worker thread."""

    def __init__(self, call: Any, task: "asyncio.Task[Any] | None") -> None:
        self._call, self._task = call, task
        self._loop = asyncio.get_running_loop()
        remaining = call.time_remaining()
        self._deadline = None if remaining is None else time.monotonic() + remaining
        self._ended = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self.cancelled = False

    def is_active(self) -> bool:
        return not self._ended.is_set()

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def add_callback(self, callback: Callable[[], None]) -> bool:
        """`callback` run once the call ends; False (and not kept) if it has ended already."""
        with self._lock:
            if not self._ended.is_set():
                self._callbacks.append(callback)
                return True
        return False

    def cancel(self) -> None:
        """End the call with CANCELLED (the client sees it at once); from any thread."""
        self.cancelled = True
        if self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise _Aborted(code, details)

    def end(self) -> None:
        with self._lock:
            self._ended.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


class Registrar:
    """What the generated registration functions call on a server; each handler they give is
    bridged onto `server` (a grpc.aio.Server), run on `pool`."""

    def __init__(self, server: Any, pool: futures.ThreadPoolExecutor) -> None:
        self._server, self._pool = server, pool

    def add_generic_rpc_handlers(self, handlers: Sequence[Any]) -> None:
        self._server.add_generic_rpc_handlers(
            tuple(_BridgedGeneric(h, self._pool) for h in handlers)
        )

    def add_registered_method_handlers(self, service: str, handlers: Mapping[str, Any]) -> None:
        bridged = {name: bridge(h, self._pool) for name, h in handlers.items()}
        self._server.add_registered_method_handlers(service, bridged)


class _BridgedGeneric(grpc.GenericRpcHandler):  # type: ignore[misc]
    def __init__(self, inner: Any, pool: futures.ThreadPoolExecutor) -> None:
        self._inner, self._pool = inner, pool
        self._bridged: dict[str, Any] = {}

    def service(self, details: Any) -> Any:
        """The bridged handler of `details.method`; only methods the inner handler serves are
        remembered (a caller's made-up names are not: bounded by the service)."""
        method = details.method
        if method not in self._bridged:
            found = self._inner.service(details)
            if found is None:
                return None
            self._bridged[method] = bridge(found, self._pool)
        return self._bridged[method]


def bridge(handler: Any, pool: futures.ThreadPoolExecutor) -> Any:
    """`handler` (a grpc.RpcMethodHandler of synchronous functions) as one grpc.aio runs."""
    codecs = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.request_streaming:
        raise ValueError("sync_bridge: client-streaming methods are not bridged")
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(_stream(handler.unary_stream, pool), **codecs)
    return grpc.unary_unary_rpc_method_handler(_unary(handler.unary_unary, pool), **codecs)


@contextlib.asynccontextmanager
async def _call(aio_context: Any) -> AsyncIterator[SyncContext]:
    """The call's SyncContext; an abort or a `cancel()` sent to the client as its status, and
    the call ended for the servicer however the coroutine ends."""
    context = SyncContext(aio_context, asyncio.current_task())
    try:
        yield context
    except _Aborted as aborted:
        await aio_context.abort(aborted.code, aborted.details)
    except asyncio.CancelledError:
        if context.cancelled:
            await aio_context.abort(grpc.StatusCode.CANCELLED, "cancelled by the server")
        raise
    finally:
        context.end()


def _unary(method: Callable[[Any, Any], Any], pool: futures.ThreadPoolExecutor) -> Any:
    async def call(request: Any, aio_context: Any) -> Any:
        async with _call(aio_context) as context:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(pool, method, request, context)

    return call


def _stream(method: Callable[[Any, Any], Iterator[Any]], pool: futures.ThreadPoolExecutor) -> Any:
    async def call(request: Any, aio_context: Any) -> AsyncIterator[Any]:
        async with _call(aio_context) as context:
            loop = asyncio.get_running_loop()
            answers = await loop.run_in_executor(pool, lambda: iter(method(request, context)))
            while (answer := await loop.run_in_executor(pool, next, answers, _END)) is not _END:
                yield answer

    return call
