"""A write whose answer the plugin does not read still gives its connection back to the client's
pool. The claim status and Event writes used to drop the urllib3 answer unread: its connection
stayed checked out, so the next call on the pool (the prepare's claim read among them) opened a
new one, a TLS handshake each time on a real API server (7.6x Go's CPU per prepare, issue 49).
Against a real HTTP server on loopback, with the official client: many writes, one connection."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from kubernetes.client import ApiClient, Configuration

from npu_dra.adapters.cluster.kube.claim_status import KubeClaimStatus
from npu_dra.adapters.cluster.kube.events import KubeEvents
from npu_dra.adapters.cluster.kube.raw import RawResourceApi
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.events import ClusterEvent, Regarding
from npu_dra.domain.ids import ClaimName, ClaimUID, DriverName, Namespace, NodeName

WRITES = 5


class Answers(BaseHTTPRequestHandler):
    """Every request answered 200 with a JSON body; one instance per connection (kept alive)."""

    protocol_version = "HTTP/1.1"
    connections: ClassVar[list[str]] = []

    def setup(self) -> None:
        super().setup()
        Answers.connections.append(str(self.client_address))

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"kind": "Status", "metadata": {}, "items": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[ApiClient]:
    Answers.connections = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    configuration = Configuration(host=f"http://127.0.0.1:{server.server_address[1]}")
    client = ApiClient(configuration)
    try:
        yield client
    finally:
        client.close()
        server.shutdown()
        server.server_close()


def test_claim_status_writes_keep_one_connection(api: ApiClient) -> None:
    writer = KubeClaimStatus(api)
    ref = ClaimRef(Namespace("default"), ClaimName("claim"), ClaimUID("uid-1"))
    for _ in range(WRITES):
        writer.write_device_status(
            ref=ref, driver=DriverName("npu.huawei.com"), node=NodeName("node-1"), devices=()
        )
    assert len(Answers.connections) == 1


def test_event_writes_keep_one_connection(api: ApiClient) -> None:
    events = KubeEvents(api, instance="test")
    for n in range(WRITES):
        regarding = Regarding(kind="Node", name="node-1")
        events.record_event(event=ClusterEvent(regarding=regarding, reason="Test", note=f"{n}"))
    assert len(Answers.connections) == 1


def test_slice_writes_keep_one_connection(api: ApiClient) -> None:
    resource = RawResourceApi(api)
    for n in range(WRITES):
        resource.create_resource_slice({"metadata": {"name": f"s{n}"}})
        resource.replace_resource_slice(f"s{n}", {"metadata": {"name": f"s{n}"}})
        resource.delete_resource_slice(f"s{n}", body={})
    assert len(Answers.connections) == 1
