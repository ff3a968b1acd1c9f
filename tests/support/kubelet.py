"""The kubelet's side of a DRA plugin's sockets, for tests and benchmarks.

It does what kubelet's pluginwatcher and DRA manager do, over real unix sockets: find the
registration socket (non-dot socket files, recursively), GetInfo with the kubelet's 1 s timeout,
pick the first DRAPlugin version the plugin lists that it knows, dial the announced endpoint,
report the verdict with NotifyRegistrationStatus, then Prepare/Unprepare.
"""

from __future__ import annotations

import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import grpc

from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2 as v1
from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2_grpc as v1_grpc
from npu_dra.adapters.grpc.gen.dra.v1beta1 import api_pb2 as v1beta1
from npu_dra.adapters.grpc.gen.dra.v1beta1 import api_pb2_grpc as v1beta1_grpc
from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2 as reg
from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2_grpc as reg_grpc

GET_INFO_TIMEOUT_S = 1.0
CALL_TIMEOUT_S = 45.0  # the kubelet's defaultClientCallTimeout
KNOWN_VERSIONS = {"v1.DRAPlugin": "v1", "v1beta1.DRAPlugin": "v1beta1"}
_APIS = {"v1": (v1, v1_grpc), "v1beta1": (v1beta1, v1beta1_grpc)}


class HasClaimFields(Protocol):
    namespace: str
    name: str
    uid: str


class WireClaim(NamedTuple):
    """A claim as the kubelet sends it, unvalidated (bad input is the point of some tests)."""

    namespace: str
    name: str
    uid: str


def registration_sockets(registry_dir: Path) -> list[Path]:
    return sorted(
        p
        for p in registry_dir.rglob("*")
        if not p.name.startswith(".") and stat.S_ISSOCK(p.lstat().st_mode)
    )


def wait_for_registration_socket(registry_dir: Path, timeout_s: float = 10.0) -> Path:
    deadline = time.monotonic() + timeout_s
    while True:
        found = registration_sockets(registry_dir) if registry_dir.exists() else []
        if found:
            return found[0]
        if time.monotonic() > deadline:
            raise TimeoutError(f"no registration socket under {registry_dir}")
        time.sleep(0.02)


def get_info(socket: Path) -> reg.PluginInfo:
    with grpc.insecure_channel(f"unix:{socket}") as channel:
        stub = reg_grpc.RegistrationStub(channel)
        return stub.GetInfo(reg.InfoRequest(), timeout=GET_INFO_TIMEOUT_S)


def notify(socket: Path, *, registered: bool, error: str = "") -> None:
    with grpc.insecure_channel(f"unix:{socket}") as channel:
        stub = reg_grpc.RegistrationStub(channel)
        stub.NotifyRegistrationStatus(
            reg.RegistrationStatus(plugin_registered=registered, error=error), timeout=5.0
        )


class DraClient:
    """One connection to a plugin's DRA endpoint, speaking one API version."""

    def __init__(self, endpoint: str, version: str) -> None:
        self.endpoint = endpoint
        self.version = version
        self._pb, grpc_module = _APIS[version]
        self._channel = grpc.insecure_channel(f"unix:{endpoint}")
        self._stub = grpc_module.DRAPluginStub(self._channel)

    def prepare(self, claims: Iterable[HasClaimFields], timeout: float = CALL_TIMEOUT_S) -> Any:
        request = self._pb.NodePrepareResourcesRequest(claims=self._claims(claims))
        return self._stub.NodePrepareResources(request, timeout=timeout)

    def unprepare(self, claims: Iterable[HasClaimFields], timeout: float = CALL_TIMEOUT_S) -> Any:
        request = self._pb.NodeUnprepareResourcesRequest(claims=self._claims(claims))
        return self._stub.NodeUnprepareResources(request, timeout=timeout)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> DraClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _claims(self, claims: Iterable[HasClaimFields]) -> list[Any]:
        return [self._pb.Claim(namespace=c.namespace, name=c.name, uid=c.uid) for c in claims]


class Kubelet:
    """Registers the plugin it finds under `registry_dir`, as the kubelet would."""

    def __init__(self, registry_dir: Path) -> None:
        self.registry_dir = registry_dir
        self.info: reg.PluginInfo | None = None

    def register(self, version: str | None = None, timeout_s: float = 10.0) -> DraClient:
        """Discover, GetInfo, validate, notify; a client for `version` (default: the plugin's
        first known choice)."""
        socket = wait_for_registration_socket(self.registry_dir, timeout_s)
        info = get_info(socket)
        self.info = info
        offered = [KNOWN_VERSIONS[v] for v in info.supported_versions if v in KNOWN_VERSIONS]
        problem = _validate(info, offered, version)
        if problem:
            notify(socket, registered=False, error=problem)
            raise AssertionError(problem)
        notify(socket, registered=True)
        return DraClient(info.endpoint or str(socket), version or offered[0])


def _validate(info: reg.PluginInfo, offered: list[str], wanted: str | None) -> str | None:
    if info.type != "DRAPlugin":
        return f"no handler for plugin type {info.type!r}"
    if not offered:
        return f"none of {list(info.supported_versions)} is a known DRAPlugin version"
    if wanted is not None and wanted not in offered:
        return f"plugin does not offer {wanted}"
    return None


def allocated_claim(
    name: str,
    devices: Iterable[str],
    *,
    namespace: str = "team-a",
    driver: str = "npu.huawei.com",
    pool: str = "node-1",
    request: str = "npu",
    share_id: str | None = None,
) -> dict[str, Any]:
    """A resource.k8s.io/v1 ResourceClaim as the scheduler leaves it: allocated to `devices`."""
    results = [
        {"request": request, "driver": driver, "pool": pool, "device": device}
        | ({"shareID": share_id} if share_id else {})
        for device in devices
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "devices": {
                "requests": [
                    {"name": request.split("/")[0], "exactly": {"deviceClassName": driver}}
                ]
            }
        },
        "status": {"allocation": {"devices": {"results": results}}},
    }
