"""grpc.health.v1 liveness: SERVING only while the kubelet could reach and use us."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from plugin_node import Node, plugin_settings, start_node

from tests.support.kubelet import notify

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.fixture
def live(scratch: Path) -> Iterator[Node]:
    started = start_node(plugin_settings(scratch, healthcheck_port=0))
    yield started
    started.plugin.stop()


def check(node: Node, service: str = "") -> int:
    port = node.container.node.liveness_server().port
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
    return int(response.status)


@pytest.mark.parametrize("service", ["", "liveness"])
def test_a_healthy_plugin_is_serving(live: Node, service: str) -> None:
    assert check(live, service) == SERVING


def test_an_unknown_service_is_not_found(live: Node) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        check(live, "readiness-of-something-else")

    assert raised.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_rejected_registration_is_not_serving_until_accepted(live: Node) -> None:
    notify(live.registration_socket, registered=False, error="endpoint already registered")
    rejected = check(live)
    notify(live.registration_socket, registered=True)

    assert rejected == NOT_SERVING
    assert check(live) == SERVING


def test_a_deleted_registration_socket_is_not_serving_until_listened_on_again(
    live: Node,
) -> None:
    live.registration_socket.unlink()
    gone = check(live)
    live.plugin.relisten()

    assert gone == NOT_SERVING
    assert check(live) == SERVING


def test_a_deleted_dra_socket_is_not_serving(live: Node) -> None:
    live.dra_socket.unlink()

    assert check(live) == NOT_SERVING


def test_port_minus_one_serves_no_health(node: Node) -> None:
    assert node.container.node.liveness_server() is None
