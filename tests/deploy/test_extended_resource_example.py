"""deploy/examples/extended-resources: the class the chart renders for the 910 family, and a
classic pod it serves, on the driver's own simulation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.helm_cli import Helm, without_helm_labels
from tests.deploy.objects import EXAMPLES, load, of_kind, only

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
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump_all([*nodes, *load([EXAMPLE])]))
    result = subprocess.run(
        [sys.executable, "-m", "npu_dra.app.cli", "simulate", "--scenario", str(scenario),
         "--output", "json", "--cdi-out", str(tmp_path / "cdi")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    output: dict[str, Any] = json.loads(result.stdout)
    (pod,) = output["pods"]
    assert pod["node"] == "atlas-800i-a2"
    devices = sorted(d["device"] for ds in pod["claims"].values() for d in ds)
    assert devices == ["npu-0", "npu-1"]  # whole chips, though the node publishes partitions
