"""The start-up repair and the kubelet's calls while the hardware does not answer (npu-smi
failing or hung): whatever the checkpoint alone can answer waits for no probe, no probe runs
under the state lock, and the part of the repair that needs the hardware runs in the background,
retried until it answers and logged once per change."""

from __future__ import annotations

import logging
import threading

import pytest

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.event_sink import EventSink
from npu_dra.app.services.hardware_reconcile import HardwareReconcile
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.restart_repair import RepairReport
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import (
    ClaimName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.profile import ASCEND_NPU
from tests.support.controlplane import wait_for

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
HARDWARE = {"chip": "910B4", "count": 4}
DCMI = "`npu-smi info` exited with status 1: dcmi module initialize failed"


class BadHardware:
    """The node's chips behind an npu-smi that fails (`failing`) or hangs until `release` is
    set (`held`); it counts its probes."""

    def __init__(self, *, failing: bool = False, held: bool = False) -> None:
        self.hardware = FakeHardware(HARDWARE, node=NODE)
        self.failing = failing
        self.release = threading.Event()
        if not held:
            self.release.set()
        self.probes = 0

    def probe(self) -> NodeInventory:
        self.probes += 1
        assert self.release.wait(timeout=30)
        if self.failing:
            raise ProbeError(DCMI)
        return self.hardware.probe()


class Node:
    """Claims prepared by a first plugin on good hardware; `restart` is the next plugin."""

    def __init__(self, claims: int = 3) -> None:
        self.cluster = MemoryCluster()
        self.cdi = MemoryCdiStore()
        self.checkpoints = MemoryCheckpointStore()
        first = self.preparer(InventoryCache(FakeHardware(HARDWARE, node=NODE)))
        self.refs = [self.claim(f"claim-{i}", f"npu-{i}") for i in range(claims)]
        outcomes = first.prepare(self.refs)
        self.devices = {uid: [d.device for d in o.devices] for uid, o in outcomes.items()}
        assert all(o.error is None for o in outcomes.values())

    def preparer(self, inventory: InventoryCache) -> ClaimPreparer:
        return ClaimPreparer(
            cluster=self.cluster,
            cdi=self.cdi,
            checkpoints=self.checkpoints,
            inventory=inventory,
            driver=DRIVER,
            profile=ASCEND_NPU,
        )

    def restart(self, hardware: BadHardware, *, prefetch: bool = False) -> ClaimPreparer:
        inventory = InventoryCache(hardware)
        if prefetch:
            inventory.prefetch()
        return self.preparer(inventory)

    def claim(self, name: str, device: str) -> ClaimRef:
        created = self.cluster.create(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "npu", "exactly": {"deviceClassName": DRIVER}}]
                    }
                },
            }
        )
        ref = ClaimRef(Namespace("default"), ClaimName(name), created["metadata"]["uid"])
        result = AllocationResult(RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(device))
        self.cluster.set_allocation(ref, Allocation((result,), NODE))
        return ref


@pytest.fixture
def node() -> Node:
    return Node()


def test_the_repair_before_serving_asks_no_hardware_when_every_spec_is_there(node: Node) -> None:
    hardware = BadHardware(failing=True)
    report = node.restart(hardware).repair_state()
    assert hardware.probes == 0
    assert (report.rewritten, report.unrepairable) == ((), ())
    assert report.waiting == "no inventory yet"  # the specs' recheck: in the background


def test_a_missing_spec_waits_for_one_probe_and_is_reported_when_it_fails(node: Node) -> None:
    node.cdi.remove(uid=node.refs[0].uid)
    hardware = BadHardware(failing=True)
    report = node.restart(hardware).repair_state()
    assert hardware.probes == 1
    [problem] = report.unrepairable
    assert node.refs[0].uid in problem
    assert "rewritten once the hardware answers" in problem
    assert report.waiting is not None
    assert "dcmi module initialize failed" in report.waiting


def test_a_missing_spec_waits_for_the_prefetched_probe_and_starts_no_second(node: Node) -> None:
    node.cdi.remove(uid=node.refs[0].uid)
    hardware = BadHardware(failing=True)
    node.restart(hardware, prefetch=True).repair_state()
    assert hardware.probes == 1


def test_checkpointed_claims_are_answered_while_the_first_probe_hangs(node: Node) -> None:
    hardware = BadHardware(held=True)
    preparer = node.restart(hardware, prefetch=True)
    preparer.repair_state()
    answers: dict[str, object] = {}

    def kubelet() -> None:
        answers["prepare"] = preparer.prepare(node.refs)
        answers["unprepare"] = preparer.unprepare(node.refs[:1])

    calls = threading.Thread(target=kubelet, daemon=True)
    calls.start()
    calls.join(timeout=20)
    answered_while_hung = not calls.is_alive()
    hardware.release.set()
    assert answered_while_hung
    assert hardware.probes == 1  # the prefetch's, still hanging while the calls were answered
    prepared = answers["prepare"]
    assert isinstance(prepared, dict)
    assert {uid: [d.device for d in o.devices] for uid, o in prepared.items()} == node.devices
    assert answers["unprepare"] == {node.refs[0].uid: None}


def test_an_idempotent_prepare_whose_spec_is_lost_fails_at_once_without_a_probe(
    node: Node,
) -> None:
    hardware = BadHardware(failing=True)
    preparer = node.restart(hardware, prefetch=True)
    preparer.repair_state()
    node.cdi.remove(uid=node.refs[0].uid)
    probes = hardware.probes
    outcomes = preparer.prepare(node.refs)
    error = outcomes[node.refs[0].uid].error
    assert error is not None
    assert "the hardware has not answered yet" in error
    assert "dcmi module initialize failed" in error
    assert [outcomes[r.uid].error for r in node.refs[1:]] == [None, None]
    assert hardware.probes == probes


def test_the_hardware_part_waits_and_changes_nothing_while_npu_smi_fails(node: Node) -> None:
    node.cdi.remove(uid=node.refs[0].uid)
    preparer = node.restart(BadHardware(failing=True))
    report = preparer.repair_hardware()
    assert report.waiting is not None
    assert report.waiting.startswith("no inventory: ")
    assert (report.rewritten, report.unrepairable) == ((), ())
    assert node.cdi.read(uid=node.refs[0].uid) is None


def test_the_hardware_part_rewrites_the_lost_spec_once_npu_smi_answers(node: Node) -> None:
    node.cdi.remove(uid=node.refs[0].uid)
    hardware = BadHardware(failing=True)
    preparer = node.restart(hardware)
    assert preparer.repair_hardware().waiting is not None
    hardware.failing = False
    report = preparer.repair_hardware()
    assert (report.rewritten, report.waiting) == ((node.refs[0].uid,), None)
    assert node.cdi.read(uid=node.refs[0].uid) is not None


class Attempts:
    """The hardware part's answers, one per try (the last one repeats)."""

    def __init__(self, *reports: RepairReport) -> None:
        self.reports = list(reports)
        self.tries = 0

    def __call__(self) -> RepairReport:
        self.tries += 1
        return self.reports.pop(0) if len(self.reports) > 1 else self.reports[0]


def test_the_background_part_retries_until_the_hardware_answers_and_logs_each_change_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    hung = RepairReport(waiting="no inventory: `npu-smi info`: no answer within 10.0s (killed)")
    foreign = ("vNPU 215 (vir05_1c_8g) on npu-7",)
    attempts = Attempts(hung, hung, hung, hung, RepairReport(foreign=foreign))
    cluster = MemoryCluster()
    sink = EventSink(cluster)
    sink.start()
    worker = HardwareReconcile(
        attempt=attempts,
        what="vNPU reconcile",
        node=NODE,
        events=sink,
        first_retry_s=0.001,
        max_retry_s=0.002,
    )
    try:
        worker.run()
    finally:
        sink.stop()
    messages = [r.getMessage() for r in caplog.records]
    assert worker.finished.is_set()
    assert attempts.tries == 5
    assert sum("waits for the hardware" in m for m in messages) == 1
    assert sum("vNPU 215 (vir05_1c_8g) on npu-7" in m for m in messages) == 1
    [event] = [e for e in cluster.list("Event") if e["reason"] == "ForeignVnpu"]
    assert event["regarding"]["kind"] == "Node"
    assert event["type"] == "Warning"
    assert "vNPU 215" in event["note"]


class Publisher:
    """Publishes whatever the inventory says; counts it."""

    def __init__(self) -> None:
        self.published = 0

    def publish(self, *, refresh: bool = True) -> tuple[ResourceSlice, ...]:
        self.published += 1
        return ()

    def sharing_changed(self) -> bool:  # no chip is shared here
        return False


def test_the_pool_waits_for_a_failing_npu_smi_saying_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    hardware = BadHardware(failing=True)
    publisher = Publisher()
    worker = PoolMaintainer(
        inventory=InventoryCache(hardware),
        publisher=publisher,  # type: ignore[arg-type]
        interval_s=3600.0,
        retry_s=0.001,
        hardware_retry_max_s=0.004,
    )
    worker.start()
    try:
        wait_for(lambda: hardware.probes >= 6, timeout=30, what="six failed probes")
        hardware.failing = False
        assert worker.wait_published(timeout=30)
    finally:
        worker.stop()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert [m.startswith("no inventory to publish") for m in errors] == [True]
    assert sum(m.startswith("published the pool again") for m in infos) == 1
    assert publisher.published == 1


def test_while_npu_smi_fails_the_plugin_is_not_ready_and_the_node_is_told_once() -> None:
    hardware = BadHardware(failing=True)
    cluster = MemoryCluster()
    sink = EventSink(cluster, min_gap_s=0.0)
    sink.start()
    worker = PoolMaintainer(
        inventory=InventoryCache(hardware),
        publisher=Publisher(),  # type: ignore[arg-type]
        interval_s=3600.0,
        retry_s=0.001,
        hardware_retry_max_s=0.004,
        events=sink,
        node=NODE,
    )
    assert worker.readiness_problem() == "the pool is not published yet"
    worker.start()
    try:
        wait_for(lambda: hardware.probes >= 6, timeout=30, what="six failed probes")
        problem = worker.readiness_problem()
        hardware.failing = False
        assert worker.wait_published(timeout=30)
        wait_for(lambda: len(cluster.list("Event")) >= 2, timeout=30, what="two events")
    finally:
        worker.stop()
        sink.stop()
    assert problem is not None
    assert DCMI in problem
    assert worker.readiness_problem() is None
    events = [(e["reason"], e["type"], e["regarding"]["name"]) for e in cluster.list("Event")]
    assert events == [
        ("HardwareUnavailable", "Warning", NODE),
        ("HardwareAvailable", "Normal", NODE),
    ]
