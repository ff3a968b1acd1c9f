"""The DevicePlugin service the kubelet dials: a thin face over the board and pure functions.

Every answer is computed from the board's current list, so the service itself holds no device
state; it only counts ListAndWatch streams, because a stream that ends while the kubelet keeps
running means the kubelet dropped us and the runtime should register again. At most MAX_STREAMS
streams are open at once (see streams.py), so they never take the threads Allocate needs.

Requests are bounded too: GetPreferredAllocation answers only ids the kubelet offered, never more
than it asked for, and an Allocate of more ids than this node has devices is refused with a
short message (the kubelet's client rejects an error of megabytes).
"""

import logging
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc

from npu_dra.adapters.grpc.device_plugin import wire
from npu_dra.adapters.grpc.device_plugin.board import DeviceBoard
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2 as api
from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2_grpc
from npu_dra.adapters.grpc.streams import StreamLimit
from npu_dra.domain.device_plugin_allocation import (
    AllocateSettings,
    AllocationRefused,
    TooManyDevices,
    UnknownDevices,
    check_sizes,
    container_allocation,
)
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.metrics import PluginMetrics
from npu_dra.domain.preferred_devices import preferred_devices

log = logging.getLogger(__name__)

STREAM_POLL_S = 0.5  # how soon a stream notices its RPC ended if nothing woke it
MAX_STREAMS = 2  # the kubelet keeps one; a re-registration may overlap the old one briefly


class DevicePluginService(api_pb2_grpc.DevicePluginServicer):
    def __init__(
        self,
        board: DeviceBoard,
        *,
        settings: AllocateSettings,
        name: str,
        metrics: PluginMetrics | None = None,
    ) -> None:
        self._board = board
        self._settings = settings
        self._name = name
        self._metrics = metrics
        self._lock = threading.Lock()
        self._open_streams = 0
        self._last_stream_end: float | None = None
        self._generation = 0  # streams opened before end_streams() belong to an older one
        self.limit = StreamLimit(MAX_STREAMS, what=f"{name}: ListAndWatch")

    def stream_lost_for(self) -> float | None:
        """Seconds since the last ListAndWatch stream ended with none open; None otherwise."""
        with self._lock:
            if self._open_streams or self._last_stream_end is None:
                return None
            return time.monotonic() - self._last_stream_end

    def end_streams(self) -> None:
        """Make every open ListAndWatch stream return now (so a server can stop at once)."""
        with self._lock:
            self._generation += 1
        self._board.wake()

    def forget_lost_stream(self) -> None:
        with self._lock:
            self._last_stream_end = None

    def GetDevicePluginOptions(self, request: api.Empty, context: Any) -> api.DevicePluginOptions:
        return wire.plugin_options()

    def ListAndWatch(self, request: api.Empty, context: Any) -> Iterator[api.ListAndWatchResponse]:
        with self.limit.slot(context):
            yield from self._list_and_watch(context)

    def _list_and_watch(self, context: Any) -> Iterator[api.ListAndWatchResponse]:
        context.add_callback(self._board.wake)
        generation = self._stream_opened()
        try:
            version, devices = self._board.snapshot()
            log.info("%s: ListAndWatch opened, sending %d device(s)", self._name, len(devices))
            yield wire.device_list(devices)
            self._listed()
            while context.is_active() and generation == self._generation:
                newer = self._board.wait_newer(version, timeout=STREAM_POLL_S)
                if newer is not None:
                    version, devices = newer
                    log.info("%s: device list changed, resending", self._name)
                    yield wire.device_list(devices)
                    self._listed()
        finally:
            self._stream_closed()

    def GetPreferredAllocation(
        self, request: api.PreferredAllocationRequest, context: Any
    ) -> api.PreferredAllocationResponse:
        devices = self._board.devices()
        answers = [
            api.ContainerPreferredAllocationResponse(
                deviceIDs=preferred_devices(
                    devices,
                    available=[DeviceName(i) for i in r.available_deviceIDs],
                    must_include=[DeviceName(i) for i in r.must_include_deviceIDs],
                    size=r.allocation_size,
                )
            )
            for r in request.container_requests
        ]
        return api.PreferredAllocationResponse(container_responses=answers)

    def Allocate(self, request: api.AllocateRequest, context: Any) -> api.AllocateResponse:
        started = time.monotonic()
        reason: str | None = "internal"  # until an answer or a refusal says otherwise
        try:
            answers = self._answers(request)
            reason = None
        except AllocationRefused as refused:
            reason = _reason_of(refused)
            log.warning("%s: Allocate refused: %s", self._name, refused)
            context.abort(_status_of(refused), f"{self._name}: {refused}")
            raise  # unreachable: abort raises; this keeps `answers` bound for the type checker
        finally:
            if self._metrics is not None:
                seconds = time.monotonic() - started
                self._metrics.allocate_done(
                    resource=self._name, seconds=seconds, error_reason=reason
                )
        return api.AllocateResponse(container_responses=answers)

    def _answers(self, request: api.AllocateRequest) -> list[api.ContainerAllocateResponse]:
        devices = self._board.devices()
        check_sizes([r.devices_ids for r in request.container_requests], len(devices))
        return [
            wire.container_response(container_allocation(devices, r.devices_ids, self._settings))
            for r in request.container_requests
        ]

    def _listed(self) -> None:
        if self._metrics is not None:
            self._metrics.devices_listed(resource=self._name)

    def PreStartContainer(
        self, request: api.PreStartContainerRequest, context: Any
    ) -> api.PreStartContainerResponse:
        return api.PreStartContainerResponse()

    def _stream_opened(self) -> int:
        with self._lock:
            self._open_streams += 1
            self._last_stream_end = None
            return self._generation

    def _stream_closed(self) -> None:
        with self._lock:
            self._open_streams -= 1
            if not self._open_streams:
                self._last_stream_end = time.monotonic()
        log.info("%s: ListAndWatch stream ended", self._name)


def _reason_of(refused: AllocationRefused) -> str:
    """The refusal's kind as a metric label: UnknownDevices -> unknown_devices."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(refused).__name__).lower()


def _status_of(refused: AllocationRefused) -> grpc.StatusCode:
    if isinstance(refused, UnknownDevices | TooManyDevices):
        return grpc.StatusCode.INVALID_ARGUMENT
    return grpc.StatusCode.FAILED_PRECONDITION
