"""A grpc.aio server of synchronous servicers, driven from any thread (adapters/grpc/aio_loop.py
says why aio; adapters/grpc/sync_bridge.py how the servicers stay synchronous)."""

from collections.abc import Callable, Sequence
from concurrent import futures
from typing import Any

import grpc

from npu_dra.adapters.grpc import aio_loop
from npu_dra.adapters.grpc.sync_bridge import Registrar

STOP_TIMEOUT_S = 60.0  # past the grace: a stop that hangs is an error, not a hung plugin


class AioServer:
    """One started server: its ports bound, its servicers registered by `register`."""

    def __init__(self, server: Any, pool: futures.ThreadPoolExecutor, ports: Sequence[int]):
        self._server, self._pool, self.ports = server, pool, tuple(ports)

    @classmethod
    def start(
        cls,
        register: Callable[[Any], None],
        addresses: Sequence[str],
        pool: futures.ThreadPoolExecutor,
    ) -> "AioServer":
        """Bound to every address (a failed bind raises here, as grpc.server's did, and `pool`
        is shut down) and serving."""

        async def build() -> AioServer:
            server = grpc.aio.server()
            register(Registrar(server, pool))
            ports = [server.add_insecure_port(address) for address in addresses]
            await server.start()
            return cls(server, pool, ports)

        try:
            return aio_loop.run(build)
        except BaseException:
            pool.shutdown(wait=False)
            raise

    def stop(self, grace: float | None) -> None:
        """Calls in flight get `grace` seconds (none: cancelled at once); then the workers end."""
        aio_loop.run(lambda: self._server.stop(grace), timeout=STOP_TIMEOUT_S + (grace or 0))
        self._pool.shutdown(wait=True, cancel_futures=True)
