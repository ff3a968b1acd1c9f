"""kill -9 at random points of prepare/unprepare storms: nothing lost, nothing held twice, no
orphan spec, no temp file, the checkpoint always readable (see storm.py for the checker)."""

from __future__ import annotations

from tests.faults.harness import create_claims, fault_node
from tests.faults.storm import storm
from tests.support.controlplane import ControlPlane

KILLS = 12


def test_kill_nine_storms_leave_whole_state(access: ControlPlane) -> None:
    with fault_node(access, "storm") as node:
        claims = create_claims(node, [[f"npu-{i % 8}"] for i in range(16)])  # two per NPU
        report = storm(node, claims, kills=KILLS, seed=20261122)

    assert report.kills == KILLS
    assert report.calls > 0
    assert report.problems == []
    assert sum(report.totals.values()) == 0, report.totals
