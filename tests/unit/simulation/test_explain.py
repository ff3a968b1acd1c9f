"""`simulate --explain`: each pending pod's nodes grouped by the first reason each fails, in
words a user acts on; the table and the JSON carry the same reasons.

The cluster: a1 and a2 alike (four 910B4, NUMA nodes 0, 0, 1, 1), t1 with eight NPUs behind a
taint no pod tolerates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.simulation.test_simulate_default import simulate

NODES = """\
kind: SimulatedNode
metadata: {name: a1}
spec: {hardware: {chip: 910B4, count: 4, numaNodes: [0, 0, 1, 1]}}
---
kind: SimulatedNode
metadata: {name: a2}
spec: {hardware: {chip: 910B4, count: 4, numaNodes: [0, 0, 1, 1]}}
---
kind: SimulatedNode
metadata: {name: t1}
spec:
  hardware: {chip: 910B4, count: 8}
  taints: [{key: dedicated, value: training, effect: NoSchedule}]
---
kind: DeviceClass
metadata: {name: npu.huawei.com}
spec: {selectors: [{cel: {expression: 'device.driver == "npu.huawei.com"'}}]}
"""
TAINT = "taint dedicated=training:NoSchedule is not tolerated by the pod"

# vNPUs need shared counters: DRAPartitionableDevices, off in v1.34.3 by default
PARTITIONS = ("--feature-gates", "DRAPartitionableDevices=true")


def claim(name: str, count: int, extra: str = "") -> str:
    return f"""\
---
kind: ResourceClaim
metadata: {{name: {name}, namespace: demo}}
spec:
  devices:
    requests:
    - name: npu
      exactly:
        deviceClassName: npu.huawei.com
        count: {count}
{extra}"""


def pod(name: str, *claims: str, spec: str = "") -> str:
    refs = "".join(f"  - {{name: c{i}, resourceClaimName: {c}}}\n" for i, c in enumerate(claims))
    return f"""\
---
kind: Pod
metadata: {{name: {name}, namespace: demo}}
spec:
{spec}  resourceClaims:
{refs}  containers: [{{name: app, image: busybox}}]
"""


SCENARIO = (
    NODES
    + claim("eight", 8)
    + pod("big", "eight")
    + claim("three-one-numa", 3, "    constraints: [{matchAttribute: npu.huawei.com/numaNode}]\n")
    + pod("numa", "three-one-numa")
    + claim(
        "misnamed",
        1,
        "        selectors: [{cel: {expression: "
        '\'device.attributes["npu.huawei.com"].chipName == "910B3"\'}}]\n',
    )
    + pod("no-such-chip", "misnamed")
    + claim("three-a", 3)
    + claim("three-b", 3)
    + pod("two-claims", "three-a", "three-b")
    + claim("one", 1)
    + pod("west", "one", spec="  nodeSelector: {zone: west}\n")
)


@pytest.fixture(scope="module")
def explained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    path = tmp_path_factory.mktemp("explain") / "scenario.yaml"
    path.write_text(SCENARIO)
    code, out, err = simulate("--scenario", str(path), "--explain", "-o", "json", "--no-prepare")
    assert code == 0, err
    return {p["pod"]: p["explain"] for p in json.loads(out)["pods"]}


def test_too_few_devices_are_counted_per_node_and_alike_nodes_grouped(
    explained: dict[str, list[dict[str, Any]]],
) -> None:
    assert explained["demo/big"] == [
        {
            "reason": "claim demo/eight, request npu: 4 device(s) match class npu.huawei.com, "
            "4 of them free, 8 needed",
            "nodes": ["a1", "a2"],
        },
        {"reason": TAINT, "nodes": ["t1"]},
    ]


def test_a_constraint_no_value_meets_is_named_with_the_values_there_are(
    explained: dict[str, list[dict[str, Any]]],
) -> None:
    [spread, tainted] = explained["demo/numa"]
    assert spread["nodes"] == ["a1", "a2"]
    assert spread["reason"] == (
        "claim demo/three-one-numa: matchAttribute npu.huawei.com/numaNode: 3 devices must "
        "share one value; free devices by value: 0: 2, 1: 2"
    )
    assert tainted["reason"] == TAINT


def test_selectors_that_match_nothing_say_so(explained: dict[str, list[dict[str, Any]]]) -> None:
    [nothing, _] = explained["demo/no-such-chip"]
    assert nothing["reason"] == (
        "claim demo/misnamed, request npu: no device on the node matches class npu.huawei.com "
        "and the request's selectors"
    )


def test_claims_that_fit_alone_but_not_together(
    explained: dict[str, list[dict[str, Any]]],
) -> None:
    [together, _] = explained["demo/two-claims"]
    assert together == {
        "reason": "the pod's requests together need 6 devices; 4 free ones match them",
        "nodes": ["a1", "a2"],
    }


def test_a_node_selector_is_named_before_devices(
    explained: dict[str, list[dict[str, Any]]],
) -> None:
    assert explained["demo/west"] == [
        {
            "reason": "the node's labels do not match the pod's nodeSelector or node affinity",
            "nodes": ["a1", "a2"],
        },
        {"reason": TAINT, "nodes": ["t1"]},
    ]


def test_the_table_prints_the_same_reasons_and_nothing_without_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    code, out, _ = simulate("--scenario", str(path), "--explain", "--no-prepare")
    assert code == 0
    section = out.split("# Why pods are pending")[1]
    assert "demo/big\n  2 node(s) (a1, a2): claim demo/eight, request npu: 4 device(s)" in section
    assert f"  1 node(s) (t1): {TAINT}" in section
    code, out, _ = simulate("--scenario", str(path), "-o", "json", "--no-prepare")
    assert code == 0
    assert all(p["explain"] == [] for p in json.loads(out)["pods"])


def test_a_missing_device_class_is_named(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(
        NODES
        + claim("one", 1).replace("deviceClassName: npu.huawei.com", "deviceClassName: gone")
        + pod("orphan", "one")
    )
    code, out, err = simulate("--scenario", str(path), "--explain", "-o", "json", "--no-prepare")
    assert code == 0, err
    [orphan] = json.loads(out)["pods"]
    assert orphan["status"] == "Pending"
    assert {g["reason"] for g in orphan["explain"]} == {
        "claim demo/one, request npu: DeviceClass gone does not exist",
        TAINT,
    }


VNPU_NODE = """\
kind: SimulatedNode
metadata: {name: v1}
spec: {hardware: {chip: 910B4, count: 1, vnpu: 910B4}}
---
kind: DeviceClass
metadata: {name: npu.huawei.com}
spec: {selectors: [{cel: {expression: 'device.driver == "npu.huawei.com"'}}]}
"""
PART = '"vnpuTemplate" in device.attributes["npu.huawei.com"]'


def selecting(expression: str) -> str:
    return f"        selectors: [{{cel: {{expression: '{expression}'}}}}]\n"


def test_devices_whose_chip_has_no_shared_counters_left_are_not_counted_free(
    tmp_path: Path,
) -> None:
    # The whole chip taken first: every vNPU device of it is unallocated, but none can be had.
    path = tmp_path / "scenario.yaml"
    path.write_text(
        VNPU_NODE
        + claim("whole", 1, selecting(f"!({PART})"))
        + pod("first", "whole")
        + claim("part", 1, selecting(PART))
        + pod("second", "part")
    )
    code, out, err = simulate(
        "--scenario", str(path), "--explain", "-o", "json", "--no-prepare", *PARTITIONS
    )
    assert code == 0, err
    by_pod = {p["pod"]: p for p in json.loads(out)["pods"]}
    assert by_pod["demo/first"]["node"] == "v1"
    [why] = by_pod["demo/second"]["explain"]
    assert why["nodes"] == ["v1"]
    assert "0 with their slice's shared counters left" in why["reason"], why
    assert why["reason"].startswith("claim demo/part, request npu: ")
