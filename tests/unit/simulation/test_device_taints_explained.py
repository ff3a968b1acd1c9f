"""Device taints (DRADeviceTaints, on in v1.36.3) decided and named: a request that does not
tolerate a device's taint cannot have it, `--explain` counts such devices apart and names the
taint, and the devices table shows a tainted chip as published with its taint.

The cluster: one node of four 910B4, three of them unhealthy (published tainted in v1.36.3)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.simulation.test_explain import claim, pod
from tests.unit.simulation.test_simulate_default import simulate

TAINT = "npu.huawei.com/health=Unhealthy:NoSchedule"
SCENARIO = (
    """\
kind: SimulatedNode
metadata: {name: n1}
spec: {hardware: {chip: 910B4, count: 4, health: {1: Alarm, 2: Alarm, 3: Alarm}}}
---
kind: DeviceClass
metadata: {name: npu.huawei.com}
spec: {selectors: [{cel: {expression: 'device.driver == "npu.huawei.com"'}}]}
"""
    + claim("three", 3)
    + pod("p", "three")
)
V136 = ("--kubernetes-version", "1.36", "--no-prepare")


def test_explain_counts_the_devices_whose_taint_the_request_does_not_tolerate(
    tmp_path: Path,
) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    code, out, err = simulate("--scenario", str(path), "--explain", "-o", "json", *V136)
    assert code == 0, err
    [result] = json.loads(out)["pods"]
    assert result["status"] == "Pending"
    assert result["explain"] == [
        {
            "reason": "claim demo/three, request npu: 4 device(s) match class npu.huawei.com, "
            f"4 of them free, 3 of those with a taint the request does not tolerate ({TAINT}: 3), "
            "3 needed",
            "nodes": ["n1"],
        }
    ]


def test_the_devices_table_shows_a_tainted_chip_as_published_with_its_taint(
    tmp_path: Path,
) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    code, out, err = simulate("--scenario", str(path), *V136)
    assert code == 0, err
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith("n1 ")}
    assert "not published" not in rows["npu-1"]
    assert f"Unhealthy (tainted {TAINT})" in rows["npu-1"]
    assert "Healthy" in rows["npu-0"]
    # v1.34.3: no device taints, the unhealthy chip is left out of its slice, as before
    code, out, err = simulate(
        "--scenario", str(path), "--no-prepare", "--kubernetes-version", "1.34"
    )
    assert code == 0, err
    assert "Unhealthy (not published)" in out
