"""The chart with `deviceProfile: gpu`: the NVML backend, the host's NVIDIA driver mounted and
named by its host path, no Ascend mount or flag, a GPU DeviceClass and node affinity, and the
plugin's own parser accepting what the chart renders. The npu profile's render is the default
one (test_helm_chart.py compares it with deploy/manifests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from npu_dra.app.options import Hardware
from npu_dra.domain.device_kinds import class_selector, kinds_of
from tests.deploy.helm_cli import Helm, HelmError
from tests.deploy.objects import container, host_path_mounts, of_kind, only, policy_on
from tests.deploy.test_helm_chart import kubelet_plugin_settings

GPU = {"deviceProfile": "gpu", "gpu": {"driverRoot": "/run/nvidia/driver"}}


def node_labels(daemonset: dict[str, Any]) -> set[str]:
    affinity = daemonset["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
    terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return {e["key"] for term in terms for e in term["matchExpressions"]}


def test_the_gpu_profile_renders_the_nvml_backend_with_the_hosts_driver(helm: Helm) -> None:
    rendered = helm.template(values=GPU)
    parsed = kubelet_plugin_settings(rendered)  # the plugin's parser accepts the render
    assert (parsed.device_profile, parsed.hardware) == ("gpu", Hardware("nvml"))
    assert parsed.driver_name == "gpu.npu-dra.io"
    assert parsed.driver_root == Path("/driver-root")
    assert parsed.host_driver_root == Path("/run/nvidia/driver")
    daemonset = only(rendered, "DaemonSet")
    mounts = host_path_mounts(daemonset)
    assert mounts["/driver-root"] == "/run/nvidia/driver"
    assert not {"/usr/local/Ascend", "/usr/local/bin/npu-smi"} & set(mounts)
    [driver] = [m for m in container(daemonset)["volumeMounts"] if m["mountPath"] == "/driver-root"]
    assert driver["readOnly"] is True
    args = container(daemonset)["args"]
    assert not [a for a in args if a.startswith(("--npu-smi", "--vnpu", "--runtime-visible"))]
    # The library is loaded by its path: no LD_LIBRARY_PATH into the host's library directories.
    assert "LD_LIBRARY_PATH" not in {e["name"] for e in container(daemonset)["env"]}
    assert "nvidia.com/gpu.present" in node_labels(daemonset)
    assert "accelerator" not in node_labels(daemonset)


def test_the_gpu_profile_has_a_gpu_device_class_and_a_policy_for_its_driver(helm: Helm) -> None:
    rendered = helm.template(values=GPU)
    classes = list(of_kind(rendered, "DeviceClass"))
    assert [c["metadata"]["name"] for c in classes] == ["gpu.npu-dra.io", "share.gpu.npu-dra.io"]
    for kind, device_class in zip(kinds_of("gpu"), classes, strict=True):
        written = " ".join(device_class["spec"]["selectors"][0]["cel"]["expression"].split())
        assert written == class_selector(kind, driver="gpu.npu-dra.io", profile="gpu")
    variables = {
        v["name"]: v["expression"]
        for v in policy_on(rendered, "resourceslices")["spec"]["variables"]
    }
    assert variables["driver"] == '"gpu.npu-dra.io"'


def test_a_driver_name_given_wins_over_the_profiles(helm: Helm) -> None:
    rendered = helm.template(values={**GPU, "driverName": "gpu.example.com"})
    assert kubelet_plugin_settings(rendered).driver_name == "gpu.example.com"
    assert [c["metadata"]["name"] for c in of_kind(rendered, "DeviceClass")] == [
        "gpu.example.com",
        "share.gpu.example.com",
    ]


def test_the_npu_profile_keeps_its_own_driver_mounts_and_nodes(helm: Helm) -> None:
    rendered = helm.template(values={"deviceProfile": "npu", "gpu": {"driverRoot": "/opt/x"}})
    parsed = kubelet_plugin_settings(rendered)
    assert (parsed.driver_name, parsed.hardware) == ("npu.huawei.com", Hardware("auto"))
    mounts = host_path_mounts(only(rendered, "DaemonSet"))
    assert "/driver-root" not in mounts
    assert mounts["/usr/local/Ascend"] == "/usr/local/Ascend"
    assert "accelerator" in node_labels(only(rendered, "DaemonSet"))


def test_a_gpu_fake_node_and_an_affinity_of_ones_own_render(helm: Helm) -> None:
    mine = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "gpu", "operator": "In", "values": ["yes"]}]}]}}}  # fmt: skip
    rendered = helm.template(
        values={"deviceProfile": "gpu", "gpu": {"hardware": "fake:/etc/gpu.yaml"}, "affinity": mine}
    )
    assert str(kubelet_plugin_settings(rendered).hardware.fake_file) == "/etc/gpu.yaml"
    assert node_labels(only(rendered, "DaemonSet")) == {"gpu"}


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"deviceProfile": "tpu"}, "/deviceProfile"),
        ({"deviceProfile": "gpu", "gpu": {"hardware": "npu-smi"}}, "/gpu/hardware"),
        ({"deviceProfile": "gpu", "gpu": {"driverRoot": "run/nvidia"}}, "/gpu/driverRoot"),
        ({"deviceProfile": "gpu", "gpu": {"driverroot": "/"}}, "driverroot"),
        ({"deviceProfile": "gpu", "devicePlugin": {"enabled": True}}, "/devicePlugin/enabled"),
    ],
)
def test_the_schema_rejects_a_gpu_setting_that_cannot_run(
    helm: Helm, values: dict[str, Any], complaint: str
) -> None:
    with pytest.raises(HelmError, match="schema") as raised:
        helm.template(values=values)
    assert complaint in str(raised.value)
