"""Every thread the plugin's gRPC servers keep is named (issue 49: the plugin's threads counted by
name): the call workers after their server, and the one loop and poller all servers share
(adapters/grpc/aio_loop.py); no server keeps a poll thread of its own, which is what woke
while idle."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from npu_dra.adapters.grpc.aio_loop import LOOP_THREAD, POLLER_THREAD
from npu_dra.adapters.grpc.liveness_server import LivenessServer, LivenessServicer
from npu_dra.adapters.grpc.sockets import UnixGrpcServer


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="npd-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _names() -> set[str]:
    return {thread.name for thread in threading.enumerate()}


def _unnamed_grpc_threads() -> list[str]:
    return [name for name in _names() if name.endswith(("(_serve)", "(_poll_wrapper)"))]


def _shared_threads() -> set[str]:
    return {name for name in _names() if name in (LOOP_THREAD, POLLER_THREAD)}


def test_a_unix_socket_servers_workers_are_named_after_it(short_dir: Path) -> None:
    def health(server: Any) -> None:
        health_pb2_grpc.add_HealthServicer_to_server(health_pb2_grpc.HealthServicer(), server)

    server = UnixGrpcServer(short_dir / "x.sock", health, name="dra-test")
    server.start()
    try:
        with (
            grpc.insecure_channel(f"unix://{server.path}") as channel,
            pytest.raises(grpc.RpcError),  # the base servicer answers UNIMPLEMENTED
        ):
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        names = _names()
        assert any(name.startswith("dra-test_") for name in names)  # a call's worker
        assert not any(name.endswith("-poll") for name in names)
        assert _shared_threads() == {LOOP_THREAD, POLLER_THREAD}
        assert _unnamed_grpc_threads() == []
    finally:
        server.stop()


def test_the_liveness_server_adds_no_thread_but_its_workers() -> None:
    class Probe:
        def problem(self) -> str | None:
            return None

    server = LivenessServer(
        LivenessServicer(Probe(), lambda: None),  # type: ignore[arg-type]
        host="127.0.0.1",
        port=0,
    )
    before = _names()
    server.start()
    try:
        added = _names() - before - {LOOP_THREAD, POLLER_THREAD}
        assert all(name.startswith("health_") for name in added), added
        assert _unnamed_grpc_threads() == []
    finally:
        server.stop()
