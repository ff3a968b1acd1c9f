"""A scripted API server: plain HTTP on loopback, answering the lists, watches and GETs the
plugin's watches and claim reads make, the way a test says, and counting every request.

Lists answer their `items` with a resourceVersion; a watch gets what `watch_answer` says (an
empty 200 by default: the server ends the watch at once, no error); a GET of an object in
`objects` answers it (or the bytes given for it, as a server may send them), else 404. What the
kube adapter sends is real (the kubernetes client over HTTP): only the server is a script.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kubernetes import client

EMPTY = b""  # a 200 with no event: the watch ends at once, no error
EXPIRED = (
    json.dumps(
        {
            "type": "ERROR",
            "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"},
        }
    ).encode()
    + b"\n"
)
REFUSED = 500  # a status instead of a body: the watch fails


class ScriptedApi:
    def __init__(self) -> None:
        self.lists: dict[str, list[Mapping[str, Any]]] = {}  # path -> items
        self.objects: dict[str, Mapping[str, Any] | bytes] = {}  # path -> object, or its bytes
        self.watch_answer: Callable[[str], bytes | int] = lambda _: EMPTY
        self.version = 7
        self.seen: Counter[tuple[str, str]] = Counter()  # (path, list|watch|get) -> requests
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def count(self, path: str, kind: str) -> int:
        with self._lock:
            return self.seen[(path, kind)]

    def api_client(self) -> client.ApiClient:
        config = client.Configuration(host=self.url)
        config.api_key = {"authorization": "Bearer scripted"}
        return client.ApiClient(config)

    def answer(self, path: str, query: Mapping[str, list[str]]) -> tuple[int, bytes]:
        watching = query.get("watch") == ["true"]
        kind = "watch" if watching else "list" if path in self.lists else "get"
        with self._lock:
            self.seen[(path, kind)] += 1
        if kind == "watch":
            answer = self.watch_answer(path)
            return (answer, b"{}") if isinstance(answer, int) else (200, answer)
        if kind == "list":
            meta = {"resourceVersion": str(self.version)}
            return 200, json.dumps({"metadata": meta, "items": self.lists[path]}).encode()
        found = self.objects.get(path)
        if found is None:
            return 404, b"{}"
        return 200, found if isinstance(found, bytes) else json.dumps(found).encode()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                status, body = api.answer(parts.path, parse_qs(parts.query))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        return Handler

    def __enter__(self) -> ScriptedApi:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def scripted_api() -> Iterator[ScriptedApi]:
    with ScriptedApi() as api:
        yield api
