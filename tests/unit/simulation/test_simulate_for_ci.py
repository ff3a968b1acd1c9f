"""`npu-dra simulate` in CI: a summary line on every run (bound, pending, gated, error counts),
`--fail-on-pending` for a non-zero exit, and the built-in demo and generated scenarios under the
driver `--driver-name` (or DRIVER_NAME) names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.unit.simulation.test_simulate_default import simulate

TOO_BIG = """\
kind: SimulatedNode
metadata: {name: n1}
spec: {hardware: {chip: 910B4, count: 2}}
---
kind: DeviceClass
metadata: {name: npu.huawei.com}
spec: {selectors: [{cel: {expression: 'device.driver == "npu.huawei.com"'}}]}
---
kind: ResourceClaimTemplate
metadata: {name: four, namespace: demo}
spec:
  spec:
    devices: {requests: [{name: npu, exactly: {deviceClassName: npu.huawei.com, count: 4}}]}
---
kind: Pod
metadata: {name: fits, namespace: demo}
spec:
  resourceClaims: [{name: npu, resourceClaimTemplateName: one}]
  containers: [{name: app, image: busybox}]
---
kind: ResourceClaimTemplate
metadata: {name: one, namespace: demo}
spec: {spec: {devices: {requests: [{name: npu, exactly: {deviceClassName: npu.huawei.com}}]}}}
---
kind: Pod
metadata: {name: too-big, namespace: demo}
spec:
  resourceClaims: [{name: npu, resourceClaimTemplateName: four}]
  containers: [{name: app, image: busybox}]
"""


@pytest.fixture
def one_pending(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(TOO_BIG)
    return path


def test_the_table_ends_with_a_summary_line(one_pending: Path) -> None:
    code, out, _ = simulate("--scenario", str(one_pending))
    assert code == 0
    assert out.rstrip().splitlines()[-1] == "# 2 pods: 1 bound, 1 pending, 0 gated, 0 error"


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_json_and_yaml_carry_the_summary_and_say_it_on_stderr(
    one_pending: Path, output: str
) -> None:
    code, out, err = simulate("--scenario", str(one_pending), "-o", output)
    assert code == 0
    document = json.loads(out) if output == "json" else yaml.safe_load(out)
    assert document["summary"].pop("refused") == 0
    assert document["summary"] == {"pods": 2, "bound": 1, "pending": 1, "gated": 0, "error": 0}
    assert "# 2 pods: 1 bound, 1 pending, 0 gated, 0 error" in err


def test_fail_on_pending_exits_non_zero_only_when_a_pod_is_left_pending(
    one_pending: Path, tmp_path: Path
) -> None:
    code, _, err = simulate("--scenario", str(one_pending), "--fail-on-pending")
    assert code == 3
    assert "1 pod not bound" in err
    assert "demo/too-big" in err
    fits = tmp_path / "fits.yaml"
    fits.write_text(TOO_BIG.split("---\nkind: Pod\nmetadata: {name: too-big")[0])
    code, _, err = simulate("--scenario", str(fits), "--fail-on-pending")
    assert code == 0, err


def test_the_built_in_demo_follows_the_driver_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIVER_NAME", "npu.example.com")
    code, out, err = simulate("-o", "json")
    assert code == 0, err
    document = json.loads(out)
    assert {s["spec"]["driver"] for s in document["resourceSlices"]} == {"npu.example.com"}
    assert document["summary"]["pending"] == 0
    assert document["summary"]["bound"] == document["summary"]["pods"] > 0


def test_a_generated_scenario_follows_the_driver_name() -> None:
    code, out, err = simulate(
        "--generate", "nodes=2,npus=4,pods=4", "--driver-name=npu.example.com", "-o", "json"
    )
    assert code == 0, err
    document = json.loads(out)
    assert document["summary"].pop("refused") == 0
    assert document["summary"] == {"pods": 4, "bound": 4, "pending": 0, "gated": 0, "error": 0}
