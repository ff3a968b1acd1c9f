"""A toxic TCP proxy on 127.0.0.1, between the plugin and the API server (a library).

The bytes pass through untouched (TLS stays end to end); only their timing and the connections
are tampered with, the way a sick network or a restarting API server would:

- `latency`: every chunk waits this long before it is forwarded, both ways;
- `paused()`: nothing is forwarded until it ends (a hung API server: connections stay open);
- `outage()`: every open connection is reset, and new ones are reset at once until it ends;
- `reset_rate`: the chance that a connection is reset as a chunk passes.

Connections and threads end with `stop()`; the listener binds loopback only.
"""

from __future__ import annotations

import contextlib
import random
import socket
import struct
import threading
from collections.abc import Iterator
from types import TracebackType

CHUNK = 65536


def _reset(sock: socket.socket) -> None:
    """Close with an RST (SO_LINGER 0), as a dropped connection looks to its peer. Shutting the
    read side first wakes a pump thread blocked in recv() (close() alone would not)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)
    with contextlib.suppress(OSError):
        sock.close()


class ToxicProxy:
    def __init__(self, upstream_port: int, *, seed: int = 0) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self.latency = 0.0
        self.reset_rate = 0.0
        self.connections = 0
        self.resets = 0
        self._random = random.Random(seed)
        self._down = False
        self._flowing = threading.Event()
        self._flowing.set()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._thread = threading.Thread(target=self._accept, name="toxic-accept", daemon=True)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self) -> ToxicProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._flowing.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self._reset_all()
        self._thread.join(timeout=5)

    def __enter__(self) -> ToxicProxy:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- the toxics ------------------------------------------------------------------------

    def go_down(self) -> None:
        with self._lock:
            self._down = True
        self._reset_all()

    def come_back(self) -> None:
        with self._lock:
            self._down = False

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        self.go_down()
        try:
            yield
        finally:
            self.come_back()

    def pause(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        self.pause()
        try:
            yield
        finally:
            self.resume()

    # --- plumbing --------------------------------------------------------------------------

    def _reset_all(self) -> None:
        with self._lock:
            doomed = list(self._open)
            self._open.clear()
        for sock in doomed:
            _reset(sock)

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                down = self._down
                self.connections += 1
            if down:
                _reset(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _reset(client)
                continue
            server.settimeout(None)
            with self._lock:
                self._open.update((client, server))
            for source, sink in ((client, server), (server, client)):
                threading.Thread(
                    target=self._pump, args=(source, sink), name="toxic-pump", daemon=True
                ).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(CHUNK)
                if not data:
                    break
                self._flowing.wait()
                if self.latency:
                    self._stopped.wait(self.latency)
                if self._stopped.is_set() or self._doomed():
                    break
                sink.sendall(data)
        except OSError:
            pass
        with self._lock:
            owned = source in self._open
            self._open.discard(source)
            self._open.discard(sink)
        if owned:
            _reset(source)
            _reset(sink)

    def _doomed(self) -> bool:
        with self._lock:
            if self._down:
                return True
            if self.reset_rate and self._random.random() < self.reset_rate:
                self.resets += 1
                return True
        return False
