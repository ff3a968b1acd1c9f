"""The kubelet's plugin-registration service (`pluginregistration.Registration`), served by us.

The kubelet calls GetInfo on `<registry dir>/<driver>-reg.sock` when the socket appears, and
(in newer releases) periodically as a liveness probe, so GetInfo answers from constants only.
The kubelet reports the outcome through NotifyRegistrationStatus; a rejection is kept so the
health service can report it.
"""

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2, api_pb2_grpc

log = logging.getLogger(__name__)

DRA_PLUGIN_TYPE = "DRAPlugin"
# Short labels, not gRPC service names; the kubelet (>= 1.34) takes the order as our preference.
DRA_VERSIONS = ("v1.DRAPlugin", "v1beta1.DRAPlugin")
# The health service, both versions (resource_health_stream.py): kubelet v1.37.2 watches over
# the newest one listed here and over none that is not; v1.34.3/v1.36.3 call v1alpha1 unasked
# and skip names they do not know (dra_plugin_manager.go `validateSupportedServices`).
DRA_HEALTH_VERSIONS = ("v1.DRAResourceHealth", "v1alpha1.DRAResourceHealth")


def registration_socket(registry_dir: Path, driver: str) -> Path:
    return registry_dir / f"{driver}-reg.sock"


@attrs.frozen
class RegistrationStatus:
    registered: bool
    error: str = ""


class RegistrationState:
    """The kubelet's last verdict on our registration; None until it has called."""

    def __init__(self) -> None:
        self._status: RegistrationStatus | None = None
        self._lock = threading.Lock()

    @property
    def status(self) -> RegistrationStatus | None:
        with self._lock:
            return self._status

    def record(self, status: RegistrationStatus) -> None:
        with self._lock:
            self._status = status

    def failure(self) -> str | None:
        """Why the kubelet rejected us, if its last verdict was a rejection."""
        status = self.status
        if status is None or status.registered:
            return None
        return status.error or "the kubelet rejected the registration without a reason"


class RegistrationServicer(api_pb2_grpc.RegistrationServicer):
    def __init__(
        self, *, driver: str, endpoint: Path, versions: Sequence[str], state: RegistrationState
    ) -> None:
        self._info = api_pb2.PluginInfo(
            type=DRA_PLUGIN_TYPE,
            name=driver,
            endpoint=str(endpoint.absolute()),
            supported_versions=list(versions),
        )
        self._state = state

    def GetInfo(self, request: api_pb2.InfoRequest, context: Any) -> api_pb2.PluginInfo:
        return self._info

    def NotifyRegistrationStatus(
        self, request: api_pb2.RegistrationStatus, context: Any
    ) -> api_pb2.RegistrationStatusResponse:
        status = RegistrationStatus(request.plugin_registered, request.error)
        self._state.record(status)
        if status.registered:
            log.info("kubelet registered plugin %s", self._info.name)
        else:
            log.error("kubelet rejected plugin %s: %s", self._info.name, request.error or "-")
        return api_pb2.RegistrationStatusResponse()


def add_registration(server: Any, servicer: RegistrationServicer) -> None:
    api_pb2_grpc.add_RegistrationServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
