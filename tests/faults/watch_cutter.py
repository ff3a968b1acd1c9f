"""An API server that ends every watch at once: plain HTTP on loopback in front of the real one,
forwarding every request but a watch to it (over TLS, the caller's bearer token passed on) and
answering each watch with an empty 200, no event and no error. It counts the requests by path
and kind, so a test can tell how often the plugin reopened each watch."""

from __future__ import annotations

import http.server
import threading
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import urllib3
import yaml

FORWARDED = ("Authorization", "Content-Type", "Accept")


class WatchCutter:
    def __init__(self, upstream: str, ca_cert: Path) -> None:
        self.upstream = upstream
        self.seen: Counter[tuple[str, str]] = Counter()  # (path, "watch" | method) -> requests
        self._lock = threading.Lock()
        self._pool = urllib3.PoolManager(ca_certs=str(ca_cert), retries=False)
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def count(self, path: str, kind: str = "watch") -> int:
        with self._lock:
            return self.seen[(path, kind)]

    def kubeconfig(self, kubeconfig: Path) -> Path:
        """The same kubeconfig (and token), pointed at this server."""
        document = yaml.safe_load(kubeconfig.read_text())
        document["clusters"][0]["cluster"] = {"server": self.url}
        kubeconfig.write_text(yaml.safe_dump(document))
        return kubeconfig

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple:
        parts = urlsplit(target)
        watching = method == "GET" and parse_qs(parts.query).get("watch") == ["true"]
        with self._lock:
            self.seen[(parts.path, "watch" if watching else method)] += 1
        if watching:
            return 200, "application/json", b""
        found = self._pool.request(
            method, self.upstream + target, headers=headers, body=body or None, timeout=30.0
        )
        return found.status, found.headers.get("Content-Type", "application/json"), found.data

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        cutter = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k in FORWARDED if (v := self.headers.get(k))}
                status, kind, data = cutter.answer(self.command, self.path, headers, body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

            def log_message(self, *_: object) -> None:
                pass

        return Handler

    def __enter__(self) -> WatchCutter:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
