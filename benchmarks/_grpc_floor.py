"""The floor under any Python kubelet plugin built on grpcio: a process that serves the
registration and DRA v1 services on unix sockets, served as npu-dra serves them (one grpc.aio
server on a loop thread, its synchronous servicers run on 8 workers: adapters/grpc/aio_server.py)
and answers every NodePrepareResources with a canned device, every NodeUnprepareResources with
success: no API read, no file, no hardware, no logging. benchmarks/vs_go.py runs it beside the
two plugins, so the table shows how much of npu-dra's gap to Go is grpcio's own cost (its
per-call work, its threads' idle wake-ups) rather than npu-dra's.

Run: `python -m benchmarks._grpc_floor REGISTRY_DIR PLUGIN_DIR DRIVER`.
"""

import signal
import sys
import threading
from concurrent import futures
from pathlib import Path
from typing import Any

from npu_dra.adapters.grpc.aio_server import AioServer
from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2 as dra
from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2_grpc as dra_grpc
from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2 as reg
from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2_grpc as reg_grpc

WORKERS = 8


class CannedDra(dra_grpc.DRAPluginServicer):  # type: ignore[misc]
    def NodePrepareResources(self, request: Any, context: Any) -> Any:
        answer = dra.NodePrepareResourcesResponse()
        for claim in request.claims:
            answer.claims[claim.uid].devices.add(
                pool_name="floor",
                device_name="npu-0",
                request_names=["npu"],
                cdi_device_ids=["k8s.floor/npu=npu-0"],
            )
        return answer

    def NodeUnprepareResources(self, request: Any, context: Any) -> Any:
        answer = dra.NodeUnprepareResourcesResponse()
        for claim in request.claims:
            answer.claims[claim.uid].SetInParent()
        return answer


class Registration(reg_grpc.RegistrationServicer):  # type: ignore[misc]
    def __init__(self, driver: str, endpoint: Path) -> None:
        self._info = reg.PluginInfo(
            type="DRAPlugin",
            name=driver,
            endpoint=str(endpoint),
            supported_versions=["v1.DRAPlugin"],
        )

    def GetInfo(self, request: Any, context: Any) -> Any:
        return self._info

    def NotifyRegistrationStatus(self, request: Any, context: Any) -> Any:
        return reg.RegistrationStatusResponse()


def main(registry: Path, plugin_dir: Path, driver: str) -> None:
    endpoint = plugin_dir / "dra.sock"

    def register(server: Any) -> None:
        dra_grpc.add_DRAPluginServicer_to_server(CannedDra(), server)
        reg_grpc.add_RegistrationServicer_to_server(Registration(driver, endpoint), server)

    addresses = [f"unix:{endpoint}", f"unix:{registry / f'{driver}-reg.sock'}"]
    server = AioServer.start(register, addresses, futures.ThreadPoolExecutor(WORKERS))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    server.stop(grace=None)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
