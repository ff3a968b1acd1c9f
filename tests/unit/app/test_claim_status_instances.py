"""Claim status with per-pod sockets (the chart's default: app/kubelet_plugin/instance.py): two
plugin instances over one data directory, each with its own status worker, decide from the
shared state as it is when they write, and write as one field manager."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.cluster.memory_claim_status import MemoryClaimStatus
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.claim_status import ClaimStatusReports, ClaimStatusWorker
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.domain.claims import ClaimRef
from tests.unit.app.test_shared_state import DRIVER, NODE, claim, instance


def worker(preparer: ClaimPreparer, cluster: MemoryCluster) -> ClaimStatusWorker:
    chips = FakeHardware({"chip": "910B4", "count": 8}, node=NODE).probe()
    return ClaimStatusWorker(
        MemoryClaimStatus(cluster), prepared=preparer.prepared, inventory=lambda: chips,
        driver=DRIVER, node=NODE, threaded=False,
    )  # fmt: skip


def entries(cluster: MemoryCluster, ref: ClaimRef) -> list[dict[str, Any]]:
    found = cluster.get("ResourceClaim", ref.name, ref.namespace) or {}
    return list(found.get("status", {}).get("devices", []))


def test_a_claim_prepared_through_one_instance_is_cleared_through_the_other(
    tmp_path: Path,
) -> None:
    cluster = MemoryCluster()
    old, new = instance(tmp_path, cluster, shared=True), instance(tmp_path, cluster, shared=True)
    old_worker, new_worker = worker(old, cluster), worker(new, cluster)
    ref = claim(cluster, "a", "npu-2")
    ClaimStatusReports(old, old_worker).prepare([ref])
    old_worker.run_due()
    assert [e["device"] for e in entries(cluster, ref)] == ["npu-2"]
    ClaimStatusReports(new, new_worker).unprepare([ref])
    new_worker.run_due()
    assert entries(cluster, ref) == []


def test_a_report_the_other_instances_unprepare_overtook_is_not_written(tmp_path: Path) -> None:
    cluster = MemoryCluster()
    old, new = instance(tmp_path, cluster, shared=True), instance(tmp_path, cluster, shared=True)
    old_worker, new_worker = worker(old, cluster), worker(new, cluster)
    ref = claim(cluster, "a", "npu-2")
    ClaimStatusReports(old, old_worker).prepare([ref])  # its report waits in the old instance
    ClaimStatusReports(new, new_worker).unprepare([ref])
    new_worker.run_due()
    old_worker.run_due()  # reads the shared state again: the claim is gone
    assert entries(cluster, ref) == []
