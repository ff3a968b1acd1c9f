"""The chart's `faultCodes` value: an operator's ConfigMap mounted read-only and passed to the
kubelet plugin as --fault-codes; nothing of it rendered while it is empty."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.helm_cli import Helm, HelmError
from tests.deploy.objects import container, only

MOUNT = "/etc/npu-dra/fault-codes"


def plugin(helm: Helm, **values: Any) -> dict[str, Any]:
    return only(helm.template(values=values), "DaemonSet")


def test_a_fault_code_configmap_is_mounted_and_passed(helm: Helm) -> None:
    daemonset = plugin(helm, faultCodes={"configMap": "my-fault-codes", "key": "codes.yaml"})
    spec = container(daemonset)
    assert f"--fault-codes={MOUNT}/codes.yaml" in spec["args"]
    mount = next(m for m in spec["volumeMounts"] if m["name"] == "fault-codes")
    assert mount == {"name": "fault-codes", "mountPath": MOUNT, "readOnly": True}
    volumes = daemonset["spec"]["template"]["spec"]["volumes"]
    volume = next(v for v in volumes if v["name"] == "fault-codes")
    assert volume["configMap"] == {
        "name": "my-fault-codes",
        "items": [{"key": "codes.yaml", "path": "codes.yaml"}],
    }


def test_the_default_key_is_huaweis_file_name(helm: Helm) -> None:
    spec = container(plugin(helm, faultCodes={"configMap": "mindx-dl-fault-config"}))
    assert f"--fault-codes={MOUNT}/faultCode.json" in spec["args"]


def test_no_configmap_renders_neither_flag_nor_mount(helm: Helm) -> None:
    daemonset = plugin(helm)
    assert not [a for a in container(daemonset)["args"] if a.startswith("--fault-codes")]
    volumes = daemonset["spec"]["template"]["spec"]["volumes"]
    assert "fault-codes" not in [v["name"] for v in volumes]


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"faultCodes": {"configMap": "Bad_Name"}}, "/faultCodes/configMap"),
        ({"faultCodes": {"configMap": "ok", "key": "../x"}}, "/faultCodes/key"),
        ({"faultCodes": {"configmap": "ok"}}, "configmap"),
    ],
)
def test_the_schema_rejects_a_bad_fault_codes_value(
    helm: Helm, values: dict[str, Any], complaint: str
) -> None:
    with pytest.raises(HelmError, match="schema") as raised:
        helm.template(values=values)
    assert complaint in str(raised.value)
