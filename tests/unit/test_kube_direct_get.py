"""DirectGet: a claim read straight on the official client's connection pool sends what the
client's own call would (its default headers, JSON, the bearer token as refreshed for this
request), under the server URL's path prefix, on a kept-alive connection; a non-2xx answer is an
ApiException; a client with a proxy is never read this way. A real HTTP server on loopback."""

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube.raw import DirectGet, RawResourceApi


class Seen:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.connections: set[int] = set()


@pytest.fixture
def server() -> Iterator[tuple[str, Seen]]:
    seen = Seen()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps the connection open between requests

        def do_GET(self) -> None:
            seen.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            seen.connections.add(self.client_address[1])
            status = 404 if "gone" in self.path else 200
            body = json.dumps({"path": self.path, "message": "not there"}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def _client(host: str, **settings: Any) -> client.ApiClient:
    configuration = client.Configuration(host=host)
    configuration.retries = False
    for key, value in settings.items():
        setattr(configuration, key, value)
    return client.ApiClient(configuration)


def test_a_claim_read_sends_the_clients_headers_and_a_token_refreshed_per_request(
    server: tuple[str, Seen],
) -> None:
    host, seen = server
    tokens = iter(["first", "second"])

    def refresh(configuration: client.Configuration) -> None:
        configuration.api_key["authorization"] = f"Bearer {next(tokens)}"

    api = _client(
        host + "/k8s/clusters/c-1",
        api_key={"authorization": "Bearer at-load"},  # as kube_config leaves it
        refresh_api_key_hook=refresh,
    )
    api.set_default_header("X-Seen", "yes")  # type: ignore[no-untyped-call]
    raw = RawResourceApi(api)
    assert isinstance(raw._direct, DirectGet)

    for _ in range(2):
        answer = raw.read_namespaced_resource_claim("claim-a", "team-b", _request_timeout=5)
        assert json.loads(answer.data)["path"].endswith("/namespaces/team-b/resourceclaims/claim-a")

    paths = [path for path, _ in seen.requests]
    assert (
        paths
        == ["/k8s/clusters/c-1/apis/resource.k8s.io/v1/namespaces/team-b/resourceclaims/claim-a"]
        * 2
    )
    headers = [h for _, h in seen.requests]
    assert [h["authorization"] for h in headers] == ["Bearer first", "Bearer second"]
    assert all(h["accept"] == "application/json" and h["x-seen"] == "yes" for h in headers)
    assert all(h["user-agent"] == api.default_headers["User-Agent"] for h in headers)
    assert len(seen.connections) == 1  # one kept-alive connection for both reads


def test_a_name_is_sent_quoted_not_as_a_path(server: tuple[str, Seen]) -> None:
    host, seen = server
    RawResourceApi(_client(host)).read_device_class("a/../b", _request_timeout=5)
    assert seen.requests[0][0] == "/apis/resource.k8s.io/v1/deviceclasses/a%2F..%2Fb"


def test_a_non_2xx_answer_is_an_api_exception_with_the_servers_body(
    server: tuple[str, Seen],
) -> None:
    host, _ = server
    with pytest.raises(ApiException) as raised:
        RawResourceApi(_client(host)).read_namespaced_resource_claim("gone", "ns")
    assert raised.value.status == 404
    assert json.loads(raised.value.body or "")["message"] == "not there"


def test_a_client_with_a_proxy_is_read_through_the_clients_own_call(
    server: tuple[str, Seen],
) -> None:
    host, _ = server
    proxied = _client(host, proxy="http://127.0.0.1:9")
    assert DirectGet.on(proxied) is None
    assert RawResourceApi(proxied)._direct is None
