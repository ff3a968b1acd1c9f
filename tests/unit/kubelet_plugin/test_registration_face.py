"""pluginregistration.Registration: what GetInfo announces and what the kubelet's verdict does."""

from __future__ import annotations

from pathlib import Path

from npu_dra.adapters.grpc.gen.pluginregistration import api_pb2
from npu_dra.adapters.grpc.registration_server import (
    DRA_VERSIONS,
    RegistrationServicer,
    RegistrationState,
    RegistrationStatus,
    registration_socket,
)


def servicer(state: RegistrationState | None = None) -> RegistrationServicer:
    return RegistrationServicer(
        driver="npu.huawei.com",
        endpoint=Path("/var/lib/kubelet/plugins/npu.huawei.com/dra.sock"),
        versions=DRA_VERSIONS,
        state=state or RegistrationState(),
    )


def test_get_info_announces_the_driver_endpoint_and_versions_v1_first() -> None:
    info = servicer().GetInfo(api_pb2.InfoRequest(), None)

    assert info == api_pb2.PluginInfo(
        type="DRAPlugin",
        name="npu.huawei.com",
        endpoint="/var/lib/kubelet/plugins/npu.huawei.com/dra.sock",
        supported_versions=["v1.DRAPlugin", "v1beta1.DRAPlugin"],
    )


def test_the_registration_socket_is_named_after_the_driver() -> None:
    path = registration_socket(Path("/var/lib/kubelet/plugins_registry"), "npu.huawei.com")

    assert path == Path("/var/lib/kubelet/plugins_registry/npu.huawei.com-reg.sock")


def test_no_verdict_yet_is_no_failure() -> None:
    state = RegistrationState()

    assert state.status is None
    assert state.failure() is None


def test_a_rejection_is_recorded_with_the_kubelets_reason() -> None:
    state = RegistrationState()
    status = api_pb2.RegistrationStatus(plugin_registered=False, error="version not supported")

    servicer(state).NotifyRegistrationStatus(status, None)

    assert state.status == RegistrationStatus(registered=False, error="version not supported")
    assert state.failure() == "version not supported"


def test_a_later_acceptance_clears_the_failure() -> None:
    state = RegistrationState()
    face = servicer(state)
    face.NotifyRegistrationStatus(api_pb2.RegistrationStatus(plugin_registered=False), None)
    rejected = state.failure()

    face.NotifyRegistrationStatus(api_pb2.RegistrationStatus(plugin_registered=True), None)

    assert rejected is not None
    assert state.failure() is None
