"""Where the DaemonSets run: only on accelerator nodes. A node matches when it carries the
`accelerator` label Huawei's own device plugin and docs use, or Node Feature Discovery's label
for a Huawei PCI accelerator; a plain node matches neither, so in a mixed cluster no plugin pod
waits there for /usr/local/Ascend. The terms are evaluated as the scheduler does (terms ORed,
expressions ANDed), on the manifests, the device plugin's DaemonSet and the chart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.deploy.helm_cli import Helm
from tests.deploy.objects import DEVICE_PLUGIN_DAEMONSET, load, manifests, only

ASCEND = {"accelerator": "huawei-Ascend910", "kubernetes.io/arch": "arm64"}
ASCEND_310P = {"accelerator": "huawei-Ascend310P"}
NFD_HUAWEI = {"feature.node.kubernetes.io/pci-1200_19e5.present": "true"}
PLAIN = {"kubernetes.io/hostname": "cpu-1", "kubernetes.io/arch": "amd64"}
NFD_NVIDIA = {"feature.node.kubernetes.io/pci-0302_10de.present": "true"}
OTHER_ACCELERATOR = {"accelerator": "nvidia-tesla-a100"}


def matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    value = labels.get(expression["key"])
    operator = expression["operator"]
    if operator == "In":
        return value in expression["values"]
    if operator == "NotIn":
        return value not in expression["values"]
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    raise AssertionError(f"operator {operator} not evaluated here")


def schedulable(daemonset: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    pod = daemonset["spec"]["template"]["spec"]
    if any(labels.get(k) != v for k, v in (pod.get("nodeSelector") or {}).items()):
        return False
    required = (
        (pod.get("affinity") or {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution")
    )
    if required is None:
        return True
    return any(
        all(matches(e, labels) for e in term.get("matchExpressions", ()))
        for term in required["nodeSelectorTerms"]
    )


def daemonsets() -> dict[str, Mapping[str, Any]]:
    return {
        "manifests": only(manifests(), "DaemonSet"),
        "device-plugin": only(load([DEVICE_PLUGIN_DAEMONSET]), "DaemonSet"),
    }


@pytest.mark.parametrize("which", ["manifests", "device-plugin"])
@pytest.mark.parametrize("labels", [ASCEND, ASCEND_310P, NFD_HUAWEI])
def test_the_shipped_daemonsets_run_on_accelerator_nodes(
    which: str, labels: dict[str, str]
) -> None:
    assert schedulable(daemonsets()[which], labels)


@pytest.mark.parametrize("which", ["manifests", "device-plugin"])
@pytest.mark.parametrize("labels", [PLAIN, NFD_NVIDIA, OTHER_ACCELERATOR])
def test_the_shipped_daemonsets_leave_other_nodes_alone(which: str, labels: dict[str, str]) -> None:
    assert not schedulable(daemonsets()[which], labels)


def test_the_chart_targets_the_same_nodes_by_default(helm: Helm) -> None:
    daemonset = only(helm.template(), "DaemonSet")
    for labels in (ASCEND, ASCEND_310P, NFD_HUAWEI):
        assert schedulable(daemonset, labels)
    for labels in (PLAIN, NFD_NVIDIA, OTHER_ACCELERATOR):
        assert not schedulable(daemonset, labels)


def test_the_chart_takes_its_own_node_affinity_and_keeps_other_affinity(helm: Helm) -> None:
    mine = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["npu"]}]}
            ]
        }
    }
    spread = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}
    daemonset = only(helm.template(values={"nodeAffinity": mine, "affinity": spread}), "DaemonSet")
    assert schedulable(daemonset, {"pool": "npu"})
    assert not schedulable(daemonset, ASCEND)
    assert "podAntiAffinity" in daemonset["spec"]["template"]["spec"]["affinity"]


def test_the_chart_runs_everywhere_when_node_affinity_is_set_to_null(helm: Helm) -> None:
    daemonset = only(helm.template(values={"nodeAffinity": None}), "DaemonSet")
    assert "affinity" not in daemonset["spec"]["template"]["spec"]
    assert schedulable(daemonset, PLAIN)
