"""DeviceTaintRule (resource.k8s.io/v1alpha3): a rule selects devices by driver, pool and device
and adds its taint, where the simulated version serves the rules (v1.34.3: DRADeviceTaints;
v1.36.3: DRADeviceTaintRules, off by default); elsewhere it is left out, with a warning.

The cluster: one node of two 910B4 chips; a rule taints npu-0 for maintenance."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.simulation.test_explain import claim, pod
from tests.unit.simulation.test_simulate_default import simulate

RULE = """\
---
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: maintenance}
spec:
  deviceSelector: {driver: npu.huawei.com, pool: n1, device: npu-0}
  taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}
"""
SCENARIO = (
    """\
kind: SimulatedNode
metadata: {name: n1}
spec: {hardware: {chip: 910B4, count: 2}}
---
kind: DeviceClass
metadata: {name: npu.huawei.com}
spec: {selectors: [{cel: {expression: 'device.driver == "npu.huawei.com"'}}]}
"""
    + claim("two", 2)
    + pod("p", "two")
    + RULE
)
TAINTS_ON = ("--feature-gates", "DRADeviceTaints=true")


def run(tmp_path: Path, *flags: str) -> tuple[dict[str, object], str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    code, out, err = simulate("--scenario", str(path), "-o", "json", "--explain", *flags)
    assert code == 0, err
    [result] = json.loads(out)["pods"]
    return result, err


def test_a_rules_taint_keeps_the_device_from_a_request_that_does_not_tolerate_it(
    tmp_path: Path,
) -> None:
    result, _ = run(tmp_path, *TAINTS_ON)
    assert result["status"] == "Pending"
    [why] = result["explain"]  # type: ignore[misc]
    assert "1 of those with a taint the request does not tolerate " in why["reason"]
    assert "example.com/maintenance=planned:NoSchedule: 1" in why["reason"]


def test_the_devices_table_names_the_rules_taint(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    code, out, err = simulate("--scenario", str(path), *TAINTS_ON)
    assert code == 0, err
    [row] = [line for line in out.splitlines() if line.startswith("n1 ") and " npu-0 " in line]
    assert "tainted example.com/maintenance=planned:NoSchedule" in row


def test_where_the_version_does_not_serve_rules_the_rule_is_left_out_with_a_warning(
    tmp_path: Path,
) -> None:
    for flags in (("--kubernetes-version", "1.34"), ("--kubernetes-version", "1.36")):
        result, err = run(tmp_path, *flags)
        assert result["status"] == "Bound", err
        assert "DeviceTaintRule maintenance" in err
        assert "is off in kube-scheduler" in err
    result, err = run(
        tmp_path, "--kubernetes-version", "1.36", "--feature-gates", "DRADeviceTaintRules=true"
    )
    assert result["status"] == "Pending"
    assert "warning" not in err


def test_a_rule_selecting_by_class_or_cel_is_refused_as_not_modelled(tmp_path: Path) -> None:
    # v1.34.3's v1alpha3 selector also has deviceClassName and CEL selectors; simulate decides
    # only driver, pool and device, and says so rather than "unknown field"
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO.replace("device: npu-0}", "device: npu-0, deviceClassName: x}"))
    code, _, err = simulate("--scenario", str(path), *TAINTS_ON)
    assert code == 4
    assert (
        "refused DeviceTaintRule maintenance: field spec.deviceSelector.deviceClassName: "
        "not modelled by simulate (it selects by driver, pool and device)"
    ) in err
