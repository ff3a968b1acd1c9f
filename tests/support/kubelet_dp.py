"""The kubelet's side of the classic device plugin API, over real unix sockets, for tests.

`FakeKubelet` plays `kubelet.sock` in a device-plugins directory: it checks each Register as the
kubelet does (version, endpoint socket in the directory, extended resource name), dials the
plugin back and asks GetDevicePluginOptions before it answers, and records what it saw.
`restart()` does to the directory what a restarting kubelet does. `PluginClient` then speaks to
a registered plugin like the kubelet's device manager: ListAndWatch on a reader thread,
GetPreferredAllocation, Allocate. Every wait is bounded; `close()` leaves no thread behind.
"""

from __future__ import annotations

import queue
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path

import grpc

from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2 as api
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2_grpc

KUBELET_SOCKET = "kubelet.sock"
CHECKPOINT = "kubelet_internal_checkpoint"
DIAL_BACK_S = 10.0  # the kubelet dials a registering plugin with this timeout
_RESOURCE = re.compile(r"^[a-z0-9.-]+\.[a-z]+/[A-Za-z0-9._-]+$")


def target(path: Path) -> str:
    return f"unix://{path}"


@dataclass(frozen=True)
class Registration:
    request: api.RegisterRequest
    options: api.DevicePluginOptions  # what the plugin answered when dialled back
    at: float  # time.monotonic() when accepted


class _Registrar(api_pb2_grpc.RegistrationServicer):
    def __init__(self, kubelet: FakeKubelet) -> None:
        self._kubelet = kubelet

    def Register(self, request: api.RegisterRequest, context: grpc.ServicerContext) -> api.Empty:
        problem = self._kubelet.problem_with(request)
        if problem:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        try:
            with grpc.insecure_channel(target(self._kubelet.dir / request.endpoint)) as channel:
                grpc.channel_ready_future(channel).result(timeout=DIAL_BACK_S)
                stub = api_pb2_grpc.DevicePluginStub(channel)
                options = stub.GetDevicePluginOptions(api.Empty(), timeout=DIAL_BACK_S)
        except (grpc.RpcError, grpc.FutureTimeoutError) as error:
            context.abort(grpc.StatusCode.UNAVAILABLE, f"dial back {request.endpoint}: {error}")
        self._kubelet.record(Registration(request, options, time.monotonic()))
        return api.Empty()


class FakeKubelet:
    def __init__(self, plugin_dir: Path) -> None:
        self.dir = plugin_dir
        self.socket = plugin_dir / KUBELET_SOCKET
        self._registrations: list[Registration] = []
        self._changed = threading.Condition()
        self._server: grpc.Server | None = None
        self._pool: futures.ThreadPoolExecutor | None = None

    def __enter__(self) -> FakeKubelet:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._pool = futures.ThreadPoolExecutor(4, thread_name_prefix="fake-kubelet")
        self._server = grpc.server(self._pool)
        api_pb2_grpc.add_RegistrationServicer_to_server(_Registrar(self), self._server)
        self._server.add_insecure_port(target(self.socket))
        self._server.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(None).wait()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self._server = self._pool = None

    def restart(self) -> float:
        """Stop, wipe the directory but the checkpoint (plugin sockets too), serve a new
        kubelet.sock; returns the time.monotonic() at which the new socket exists."""
        self.stop()
        for entry in self.dir.iterdir():
            if entry.name != CHECKPOINT and not entry.is_dir():
                entry.unlink()
        self.start()
        return time.monotonic()

    @property
    def registrations(self) -> list[Registration]:
        with self._changed:
            return list(self._registrations)

    def wait_for_registrations(self, count: int, *, timeout: float = 5.0) -> list[Registration]:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._registrations) >= count, timeout):
                got = [r.request.resource_name for r in self._registrations]
                raise TimeoutError(f"{count} registration(s) expected in {timeout}s, got {got}")
            return list(self._registrations)

    def record(self, registration: Registration) -> None:
        with self._changed:
            self._registrations.append(registration)
            self._changed.notify_all()

    def problem_with(self, request: api.RegisterRequest) -> str | None:
        """What the kubelet would refuse about `request`, if anything."""
        if request.version != "v1beta1":
            return f"unsupported version {request.version!r}"
        if "/" in request.endpoint or not _is_socket(self.dir / request.endpoint):
            return f"endpoint {request.endpoint!r} is not a socket file in {self.dir}"
        name = request.resource_name
        if not _RESOURCE.match(name) or name.split("/")[0].endswith("kubernetes.io"):
            return f"{name!r} is not an extended resource name"
        return None

    def plugin(self, endpoint: str) -> PluginClient:
        return PluginClient(self.dir / endpoint)


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(path.lstat().st_mode)
    except FileNotFoundError:
        return False


class PluginClient:
    """The kubelet's device manager end of one plugin's socket."""

    def __init__(self, socket: Path, *, timeout: float = 5.0) -> None:
        self._channel = grpc.insecure_channel(target(socket))
        self._stub = api_pb2_grpc.DevicePluginStub(self._channel)
        self._timeout = timeout
        self._streams: list[DeviceStream] = []

    def __enter__(self) -> PluginClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        for stream in self._streams:
            stream.cancel()
        self._channel.close()

    def options(self) -> api.DevicePluginOptions:
        return self._stub.GetDevicePluginOptions(api.Empty(), timeout=self._timeout)

    def watch(self) -> DeviceStream:
        stream = DeviceStream(self._stub.ListAndWatch(api.Empty()))
        self._streams.append(stream)
        return stream

    def preferred(self, available: Iterable[str], size: int, must: Iterable[str] = ()) -> list[str]:
        request = api.ContainerPreferredAllocationRequest(
            available_deviceIDs=list(available),
            must_include_deviceIDs=list(must),
            allocation_size=size,
        )
        response = self._stub.GetPreferredAllocation(
            api.PreferredAllocationRequest(container_requests=[request]), timeout=self._timeout
        )
        return list(response.container_responses[0].deviceIDs)

    def allocate(self, *containers: Sequence[str]) -> api.AllocateResponse:
        requests = [api.ContainerAllocateRequest(devices_ids=list(ids)) for ids in containers]
        return self._stub.Allocate(
            api.AllocateRequest(container_requests=requests), timeout=self._timeout
        )

    def pre_start(self, ids: Sequence[str]) -> api.PreStartContainerResponse:
        return self._stub.PreStartContainer(
            api.PreStartContainerRequest(devices_ids=list(ids)), timeout=self._timeout
        )


Listing = dict[str, tuple[str, tuple[int, ...]]]  # ID -> (health, NUMA nodes)


class DeviceStream:
    """A ListAndWatch call read on a thread; each message becomes one `Listing`."""

    def __init__(self, call: grpc.Future) -> None:
        self._call = call
        self._messages: queue.Queue[Listing | Exception] = queue.Queue()
        self._thread = threading.Thread(target=self._read, name="list-and-watch", daemon=True)
        self._thread.start()

    def next_list(self, *, timeout: float = 5.0) -> Listing:
        item = self._messages.get(timeout=timeout)
        if isinstance(item, Exception):
            raise item
        return item

    def wait_for(self, predicate: Callable[[Listing], bool], *, timeout: float = 5.0) -> Listing:
        """The first message (from now on) that satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        while True:
            listing = self.next_list(timeout=max(deadline - time.monotonic(), 0.01))
            if predicate(listing):
                return listing

    def ended(self, *, timeout: float = 5.0) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def cancel(self) -> None:
        self._call.cancel()
        self._thread.join(5.0)

    def _read(self) -> None:
        try:
            for message in self._call:
                self._messages.put(
                    {
                        d.ID: (d.health, tuple(n.ID for n in d.topology.nodes))
                        for d in message.devices
                    }
                )
        except grpc.RpcError as error:
            self._messages.put(error)
