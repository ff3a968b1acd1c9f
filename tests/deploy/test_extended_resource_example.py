"""deploy/examples/extended-resources: the class the chart renders for the 910 family, and a
classic pod it serves, on the driver's own simulation."""

from __future__ import annotations

from pathlib import Path

from tests.deploy.helm_cli import Helm, without_helm_labels
from tests.deploy.objects import EXAMPLES, load, of_kind, only, simulate_json

EXAMPLE = EXAMPLES / "extended-resources" / "ascend910.yaml"
FAMILY = {"name": "ascend910.npu.huawei.com", "chipPrefix": "910",
          "extendedResourceName": "huawei.com/Ascend910"}  # fmt: skip


def test_the_example_class_is_what_the_chart_renders(helm: Helm) -> None:
    rendered = helm.template(values={"deviceClass": {"families": [FAMILY]}})
    classes = {o["metadata"]["name"]: o for o in of_kind(rendered, "DeviceClass")}
    chart = without_helm_labels(classes[FAMILY["name"]])
    assert chart == only(load([EXAMPLE]), "DeviceClass")


def test_the_classic_pod_gets_two_whole_910_npus(tmp_path: Path) -> None:
    nodes = [
        {"kind": "SimulatedNode", "metadata": {"name": "atlas-300i-duo"},
         "spec": {"hardware": {"chip": "310P3", "count": 2, "topology": "none"}}},
        {"kind": "SimulatedNode", "metadata": {"name": "atlas-800i-a2"},
         "spec": {"hardware": {"chip": "910B4", "count": 2, "vnpu": "910B4"}}},
    ]  # fmt: skip
    # as the example says: a 1.34 cluster with the gates (vNPUs too, which the class leaves out)
    gates = "DRAExtendedResource=true,DRAPartitionableDevices=true"
    output = simulate_json([*nodes, *load([EXAMPLE])], tmp_path, "--feature-gates", gates)
    (pod,) = output["pods"]
    assert pod["node"] == "atlas-800i-a2"
    devices = sorted(d["device"] for ds in pod["claims"].values() for d in ds)
    assert devices == ["npu-0", "npu-1"]  # whole chips, though the node publishes vNPU devices


def test_without_the_gate_the_classic_pod_waits_for_a_device_plugin(tmp_path: Path) -> None:
    """v1.34.3 as shipped drops the class's extendedResourceName: nothing offers the resource."""
    node = {"kind": "SimulatedNode", "metadata": {"name": "atlas-800i-a2"},
            "spec": {"hardware": {"chip": "910B4", "count": 2}}}  # fmt: skip
    (pod,) = simulate_json([node, *load([EXAMPLE])], tmp_path, "--kubernetes-version", "1.34")[
        "pods"
    ]
    assert pod["node"] is None
    assert "Insufficient huawei.com/Ascend910" in pod["reason"]
