"""The chart's DeviceClasses can carry `extendedResourceName` (KEP-5004), one value per class,
and `vnpu` (or its older name `partitions`) reaches the plugin's flag; the defaults render none
of it."""

from __future__ import annotations

import pytest

from npu_dra.app.cli import build_parser
from npu_dra.app.options import settings_from
from npu_dra.domain.device_kinds import WHOLE, class_selector
from tests.deploy.helm_cli import Helm, HelmError
from tests.deploy.objects import expanded_argv, of_kind, only

FAMILIES = {
    "deviceClass": {
        "extendedResourceName": "huawei.com/npu",
        "families": [
            {"name": "ascend910.npu.huawei.com", "chipPrefix": "910",
             "extendedResourceName": "huawei.com/Ascend910"},
            {"name": "ascend310p.npu.huawei.com", "chipPrefix": "310P",
             "extendedResourceName": "huawei.com/Ascend310P"},
        ],
    }
}  # fmt: skip


def test_each_class_carries_its_own_extended_resource_name(helm: Helm) -> None:
    classes = {
        o["metadata"]["name"]: o for o in of_kind(helm.template(values=FAMILIES), "DeviceClass")
    }
    assert {n: c["spec"].get("extendedResourceName") for n, c in classes.items()} == {
        "npu.huawei.com": "huawei.com/npu",
        "vnpu.npu.huawei.com": None,
        "share.npu.huawei.com": None,
        "ascend910.npu.huawei.com": "huawei.com/Ascend910",
        "ascend310p.npu.huawei.com": "huawei.com/Ascend310P",
    }
    (selector,) = classes["ascend910.npu.huawei.com"]["spec"]["selectors"]
    expression = " ".join(selector["cel"]["expression"].split())
    whole = class_selector(WHOLE, driver="npu.huawei.com", profile="npu")
    assert (
        expression == f'{whole} && device.attributes["npu.huawei.com"].chipName.startsWith("910")'
    )


def test_the_default_class_has_no_extended_resource_name(helm: Helm) -> None:
    for device_class in of_kind(helm.template(), "DeviceClass"):
        assert "extendedResourceName" not in device_class["spec"]


@pytest.mark.parametrize("name", ["Ascend910", "huawei.com/", "huawei.com/Ascend 910"])
def test_the_schema_rejects_a_name_that_is_no_extended_resource(helm: Helm, name: str) -> None:
    with pytest.raises(HelmError, match="extendedResourceName"):
        helm.template(values={"deviceClass": {"extendedResourceName": name}})


@pytest.mark.parametrize("value", ["vnpu", "partitions"])  # partitions: the older name
def test_vnpu_reaches_the_plugins_flag(helm: Helm, value: str) -> None:
    daemonset = only(helm.template(set_values=[f"{value}=templates"]), "DaemonSet")
    argv = expanded_argv(daemonset, {"NODE_NAME": "node-a"})
    settings = settings_from(build_parser().parse_args(argv[1:]))
    assert settings.vnpu == "templates"
    assert "--vnpu=templates" in argv
    default = expanded_argv(only(helm.template(), "DaemonSet"), {"NODE_NAME": "node-a"})
    assert not any(a.startswith(("--vnpu", "--partitions")) for a in default)


def test_runtime_visible_devices_reaches_the_plugins_flag(helm: Helm) -> None:
    daemonset = only(helm.template(set_values=["runtimeVisibleDevices=container"]), "DaemonSet")
    argv = expanded_argv(daemonset, {"NODE_NAME": "node-a"})
    assert settings_from(build_parser().parse_args(argv[1:])).runtime_visible_devices == "container"
    default = expanded_argv(only(helm.template(), "DaemonSet"), {"NODE_NAME": "node-a"})
    assert not any(a.startswith("--runtime-visible-devices") for a in default)
    with pytest.raises(HelmError, match="runtimeVisibleDevices"):
        helm.template(set_values=["runtimeVisibleDevices=host"])
