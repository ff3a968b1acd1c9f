"""`simulate --explain` where the allocation search gives up: counting decides a node that
counting alone rules out (no search needed), and every pod left pending or undecided gets a
reason, per node.

The cluster: one node of sixteen 910B4, four of them taken by the first pod."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.unit.simulation.test_explain import claim, pod
from tests.unit.simulation.test_simulate_default import simulate

NODE = """\
kind: SimulatedNode
metadata: {name: big}
spec: {hardware: {chip: 910B4, count: 16}}
---
kind: DeviceClass
metadata: {name: npu.huawei.com}
spec: {selectors: [{cel: {expression: 'device.driver == "npu.huawei.com"'}}]}
"""


def run(tmp_path: Path, text: str, *flags: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    code, out, err = simulate("--scenario", str(path), "-o", "json", "--no-prepare", *flags)
    return code, {p["pod"]: p for p in json.loads(out)["pods"]}, err


def test_a_claim_for_more_devices_than_are_free_is_pending_with_the_count(
    tmp_path: Path,
) -> None:
    scenario = NODE + claim("four", 4) + pod("first", "four") + claim("all", 16) + pod("big", "all")
    code, pods, err = run(tmp_path, scenario, "--explain", "--fail-on-pending")
    assert code == 3, err
    assert pods["demo/big"]["status"] == "Pending"
    assert pods["demo/big"]["reason"] == "0/1 nodes are available: 1 cannot allocate all claims."
    assert pods["demo/big"]["explain"] == [
        {
            "reason": "claim demo/all, request npu: 16 device(s) match class npu.huawei.com, "
            "12 of them free, 16 needed",
            "nodes": ["big"],
        }
    ]


def test_an_undecided_pod_is_explained_as_the_search_giving_up(tmp_path: Path) -> None:
    # Counting leaves room (16 free, 4 needed): only the search could decide, and it ran out.
    code, pods, err = run(
        tmp_path,
        NODE + claim("four", 4) + pod("first", "four"),
        "--explain",
        "--search-budget",
        "2",
    )
    assert code == 0, err
    assert pods["demo/first"]["status"] == "Undecided"
    assert pods["demo/first"]["explain"] == [
        {
            "reason": "the allocation search ran out of simulate's step budget (--search-budget "
            "2) before it decided; counting leaves the node possible: claim demo/four, request "
            "npu: 16 device(s) match class npu.huawei.com, 16 of them free, 4 needed",
            "nodes": ["big"],
        }
    ]


def test_a_pod_kept_out_of_the_queue_is_explained_too(tmp_path: Path) -> None:
    code, pods, err = run(tmp_path, NODE + pod("orphan", "gone"), "--explain")
    assert code == 0, err
    [why] = pods["demo/orphan"]["explain"]
    assert why["reason"] == pods["demo/orphan"]["reason"]
    assert "resourceclaim demo/gone not found" in why["reason"]


def test_fail_on_pending_names_each_pods_reason(tmp_path: Path) -> None:
    scenario = NODE + claim("four", 4) + pod("first", "four") + claim("all", 16) + pod("big", "all")
    path = tmp_path / "scenario.yaml"
    path.write_text(scenario)
    code, _, err = simulate("--scenario", str(path), "--no-prepare", "--fail-on-pending")
    assert code == 3
    assert "npu-dra simulate: 1 pod not bound: demo/big\n" in err
    assert "  demo/big: Pending: 0/1 nodes are available: 1 cannot allocate all claims.\n" in err
