"""Synchronous servicers on the grpc.aio server (adapters/grpc/sync_bridge.py): what they used of
the threaded server's context still holds. An abort reaches the client with its code; a call
whose deadline passes, or whose client leaves, ends for the servicer (`is_active()` false, its
callbacks run, a stream's generator finishes); `cancel()` ends a stream with CANCELLED; a stop
lets calls in flight finish within the grace."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from npu_dra.adapters.grpc.sockets import UnixGrpcServer
from npu_dra.adapters.grpc.sync_bridge import _BridgedGeneric

Request = health_pb2.HealthCheckRequest
SERVING = health_pb2.HealthCheckResponse.SERVING


class Servicer(health_pb2_grpc.HealthServicer):  # type: ignore[misc]
    """Check: answers, or by service name aborts, or waits until the call ends; Watch: sends
    until the call ends, or cancels itself after its first message."""

    def __init__(self) -> None:
        self.ended: dict[str, threading.Event] = {}

    def _end_of(self, service: str) -> threading.Event:
        return self.ended.setdefault(service, threading.Event())

    def Check(self, request: Any, context: Any) -> Any:
        if request.service == "abort":
            context.abort(grpc.StatusCode.NOT_FOUND, "no such service")
        if request.service.startswith("wait"):
            context.add_callback(self._end_of(f"{request.service} callback").set)
            while context.is_active():
                time.sleep(0.01)
            self._end_of(request.service).set()
        return health_pb2.HealthCheckResponse(status=SERVING)

    def Watch(self, request: Any, context: Any) -> Iterator[Any]:
        ended = threading.Event()
        context.add_callback(ended.set)
        try:
            while not ended.is_set():
                yield health_pb2.HealthCheckResponse(status=SERVING)
                if request.service == "cancel":
                    context.cancel()
                ended.wait(0.02)
        finally:
            self._end_of(request.service).set()


@pytest.fixture
def served() -> Iterator[tuple[Servicer, Any, UnixGrpcServer]]:
    directory = Path(tempfile.mkdtemp(prefix="npd-", dir="/tmp"))
    servicer = Servicer()
    server = UnixGrpcServer(
        directory / "x.sock",
        lambda s: health_pb2_grpc.add_HealthServicer_to_server(servicer, s),
        name="bridge-test",
    )
    server.start()
    channel = grpc.insecure_channel(f"unix://{server.path}")
    try:
        yield servicer, health_pb2_grpc.HealthStub(channel), server
    finally:
        channel.close()
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


def test_an_answer_and_an_abort_reach_the_client(served: Any) -> None:
    _, stub, _ = served
    assert stub.Check(Request()).status == SERVING
    with pytest.raises(grpc.RpcError) as raised:
        stub.Check(Request(service="abort"))
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert raised.value.details() == "no such service"


def test_a_passed_deadline_ends_the_call_for_the_servicer(served: Any) -> None:
    servicer, stub, _ = served
    with pytest.raises(grpc.RpcError) as raised:
        stub.Check(Request(service="wait-deadline"), timeout=0.3)
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert servicer._end_of("wait-deadline").wait(5)
    assert servicer._end_of("wait-deadline callback").wait(5)


def test_a_client_that_leaves_a_stream_ends_its_generator(served: Any) -> None:
    servicer, stub, _ = served
    stream = stub.Watch(Request(service="left"))
    assert next(stream).status == SERVING
    stream.cancel()
    assert servicer._end_of("left").wait(5)


def test_cancel_ends_a_stream_with_cancelled(served: Any) -> None:
    servicer, stub, _ = served
    with pytest.raises(grpc.RpcError) as raised:
        for _ in stub.Watch(Request(service="cancel"), timeout=5):
            pass
    assert raised.value.code() == grpc.StatusCode.CANCELLED
    assert servicer._end_of("cancel").wait(5)


def test_a_stop_ends_open_calls_and_leaves_no_socket(served: Any) -> None:
    servicer, stub, server = served
    stream = stub.Watch(Request(service="open"))
    assert next(stream).status == SERVING
    server.stop(grace=0.2)
    assert servicer._end_of("open").wait(5)
    assert not server.path.exists()


def test_calls_to_methods_nobody_serves_leave_nothing_behind() -> None:
    """A generic handler remembers the methods it bridged, never the names callers made up:
    whoever reaches a port (the liveness port is on the host network) cannot grow it."""
    pool = futures.ThreadPoolExecutor(1)
    inner = grpc.method_handlers_generic_handler(
        "t.T", {"Known": grpc.unary_unary_rpc_method_handler(lambda request, context: request)}
    )
    generic = _BridgedGeneric(inner, pool)
    for n in range(100):
        assert generic.service(Details(f"/t.T/Made-up-{n}")) is None
    assert generic.service(Details("/t.T/Known")) is generic.service(Details("/t.T/Known"))
    assert len(generic._bridged) == 1
    pool.shutdown()


class Details:
    def __init__(self, method: str) -> None:
        self.method, self.invocation_metadata = method, ()
