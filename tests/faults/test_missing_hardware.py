"""A node whose npu-smi is missing (a wrong --npu-smi-path, the driver not installed): the
kubelet plugin keeps its sockets and liveness, answers NOT_SERVING on the health port's
"readiness" with the reason, and says so in its log once, not on every retry."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

NPU_DRA = Path(sys.executable).with_name("npu-dra")
WATCH_S = 6.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def check(port: int, service: str) -> int:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)  # type: ignore[no-untyped-call]
        answer = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        return int(answer.status)


def test_a_missing_npu_smi_makes_the_plugin_not_ready_saying_why_once(tmp_path: Path) -> None:
    port = free_port()
    argv = [
        str(NPU_DRA), "kubelet-plugin", "--node-name=node-a", "--cluster=memory",
        f"--npu-smi-path={tmp_path / 'no-such-npu-smi'}",
        f"--kubelet-registrar-directory-path={tmp_path / 'registry'}",
        f"--kubelet-plugins-directory-path={tmp_path / 'plugins'}",
        f"--cdi-root={tmp_path / 'cdi'}", f"--healthcheck-port={port}", "--metrics-port=-1",
        f"--api-lock-dir={tmp_path / 'api-lock'}",
    ]  # fmt: skip
    plugin = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    readiness = -1  # no answer yet
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                readiness = check(port, "readiness")
                break
            except grpc.RpcError:
                time.sleep(0.2)
        time.sleep(WATCH_S)
        readiness_later = check(port, "readiness")
    finally:
        plugin.terminate()
        _, log = plugin.communicate(timeout=30)
    not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
    assert (readiness, readiness_later) == (not_serving, not_serving)
    lines = log.splitlines()
    missing = [line for line in lines if "no-such-npu-smi" in line]
    assert any("not ready" in line for line in missing), log
    # Once as the publish's failure, once as the CDI check's, once as not ready: not every try.
    assert len(missing) <= 4, log
    assert len(lines) < 20, log
