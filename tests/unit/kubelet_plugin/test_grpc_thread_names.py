"""Every thread a gRPC server of the plugin keeps is named after the server (issue 49: the
plugin's threads counted by name): its poll thread, and its call workers."""

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

from npu_dra.adapters.grpc.liveness_server import LivenessServer, LivenessServicer
from npu_dra.adapters.grpc.sockets import UnixGrpcServer


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="npd-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _names() -> set[str]:
    return {thread.name for thread in threading.enumerate()}


def _unnamed_serve_threads() -> list[str]:
    return [name for name in _names() if name.endswith("(_serve)")]


def test_a_unix_socket_server_polls_on_a_thread_named_after_it(short_dir: Path) -> None:
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
        assert "dra-test-poll" in names
        assert any(name.startswith("dra-test_") for name in names)  # a call's worker
        assert _unnamed_serve_threads() == []
    finally:
        server.stop()


def test_the_liveness_server_polls_on_a_thread_named_health() -> None:
    class Probe:
        def problem(self) -> str | None:
            return None

    server = LivenessServer(
        LivenessServicer(Probe(), lambda: None),  # type: ignore[arg-type]
        host="127.0.0.1",
        port=0,
    )
    server.start()
    try:
        assert "health-poll" in _names()
        assert _unnamed_serve_threads() == []
    finally:
        server.stop()
