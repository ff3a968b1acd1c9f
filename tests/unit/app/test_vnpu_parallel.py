"""vNPU prepares in parallel (#25, item 6): creates on different chips run at once, creates on
one chip one at a time, and once the chip's vNPUs are known a create is one npu-smi call and a
destroy another. No latency is asserted: a create that waits for another to start proves they
overlap, and every wait is bounded so a serialized implementation fails instead of hanging."""

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.fake_vnpu import FakeVnpuTable
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.adapters.hardware.vnpu_probe import VnpuProbe
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.restart_repair import RepairReport
from npu_dra.app.services.vnpu import VnpuService
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef
from npu_dra.domain.device import Device
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.ports import VnpuTable
from npu_dra.domain.prepare import ClaimOutcome
from npu_dra.domain.profile import ASCEND_NPU
from npu_dra.domain.vnpu.instance import Vnpu
from npu_dra.domain.vnpu.templates import VnpuOffer
from tests.support.fake_npu_smi import FakeNpuSmi, load_scenario

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
BOUND_S = 10.0  # a bound on waits that only a broken implementation reaches
VIR05 = "npu-{}-vir05-1c-8g-{}"


class GatedTable:
    """The fake table whose creates and destroys run `gate(op, chip)` first: a test's hook into
    their timing."""

    def __init__(self, inner: FakeVnpuTable) -> None:
        self.inner = inner
        self.gate: Callable[[str, str], None] = lambda op, chip: None
        self._lock = threading.Lock()
        self.creating: dict[str, int] = {}  # chip -> creates running on it now
        self.most: dict[str, int] = {}  # chip -> most creates seen running on it at once

    def vnpu_offer(self, *, device: Device) -> VnpuOffer | None:
        return self.inner.vnpu_offer(device=device)

    def vnpus(self, *, device: Device) -> tuple[Vnpu, ...]:
        return self.inner.vnpus(device=device)

    def create(self, *, device: Device, template: str, vnpu_id: int) -> Vnpu:
        with self._lock:
            now = self.creating[device.name] = self.creating.get(device.name, 0) + 1
            self.most[device.name] = max(self.most.get(device.name, 0), now)
        try:
            self.gate("create", device.name)
            return self.inner.create(device=device, template=template, vnpu_id=vnpu_id)
        finally:
            with self._lock:
                self.creating[device.name] -= 1

    def destroy(self, *, device: Device, vnpu_id: int) -> None:
        self.gate("destroy", device.name)
        self.inner.destroy(device=device, vnpu_id=vnpu_id)


class Node:
    def __init__(self, table: VnpuTable, hardware: FakeHardware) -> None:
        self.cluster, self.cdi = MemoryCluster(), MemoryCdiStore()
        self.checkpoints = MemoryCheckpointStore()
        self.table, self.hardware = table, hardware
        self.preparer = ClaimPreparer(
            cluster=self.cluster,
            cdi=self.cdi,
            checkpoints=self.checkpoints,
            inventory=InventoryCache(VnpuProbe(hardware, table)),
            driver=DRIVER,
            profile=ASCEND_NPU,
            vnpus=VnpuService(table=table, checkpoints=self.checkpoints),
        )

    def claim(self, name: str, device: str) -> ClaimRef:
        created = self.cluster.create(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": "n"}}]}
                },
            }
        )
        ref = ClaimRef(Namespace("default"), ClaimName(name), created["metadata"]["uid"])
        result = AllocationResult(RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(device))
        self.cluster.set_allocation(ref, Allocation((result,), NODE))
        return ref

    def chip(self, name: str) -> Device:
        chip = self.hardware.probe().get(DeviceName(name))
        assert chip is not None
        return chip


class Background:
    """A prepare on its own thread; `outcome()` joins it (bounded)."""

    def __init__(self, preparer: ClaimPreparer, ref: ClaimRef) -> None:
        self._ref = ref
        self._outcomes: dict[ClaimUID, ClaimOutcome] = {}
        self._thread = threading.Thread(
            target=lambda: self._outcomes.update(preparer.prepare([ref])), daemon=True
        )
        self._thread.start()

    def outcome(self) -> ClaimOutcome:
        self._thread.join(BOUND_S)
        assert not self._thread.is_alive(), f"the prepare of {self._ref} did not return"
        return self._outcomes[self._ref.uid]


@pytest.fixture
def gated() -> Node:
    hardware = FakeHardware({"chip": "910B4", "count": 8, "vnpu": "910B4"}, node=NODE)
    fake = hardware.vnpu_table()
    assert fake is not None
    return Node(GatedTable(fake), hardware)


def _gated(node: Node) -> GatedTable:
    assert isinstance(node.table, GatedTable)
    return node.table


def test_creates_on_two_chips_run_at_the_same_time(gated: Node) -> None:
    """The create on npu-0 finishes only once the create on npu-1 has started: with one lock
    for the node the second never starts while the first waits, and the first fails."""
    table = _gated(gated)
    first_in, second_in = threading.Event(), threading.Event()

    def gate(op: str, chip: str) -> None:
        if chip == "npu-0":
            first_in.set()
            if not second_in.wait(BOUND_S):
                raise ProbeError("the create on npu-1 did not start while npu-0's ran")
        else:
            second_in.set()

    table.gate = gate
    first = Background(gated.preparer, gated.claim("a", VIR05.format(0, 0)))
    assert first_in.wait(BOUND_S)
    second = Background(gated.preparer, gated.claim("b", VIR05.format(1, 0)))
    assert second.outcome().error is None
    assert first.outcome().error is None
    assert table.most == {"npu-0": 1, "npu-1": 1}
    assert [len(gated.table.vnpus(device=gated.chip(c))) for c in ("npu-0", "npu-1")] == [1, 1]


def test_destroys_on_two_chips_run_at_the_same_time(gated: Node) -> None:
    """As for creates: the unprepare on npu-0 destroys only once npu-1's destroy has started."""
    table = _gated(gated)
    a, b = gated.claim("a", VIR05.format(0, 0)), gated.claim("b", VIR05.format(1, 0))
    assert [o.error for o in gated.preparer.prepare([a, b]).values()] == [None, None]
    first_in, second_in = threading.Event(), threading.Event()

    def gate(op: str, chip: str) -> None:
        if op == "destroy" and chip == "npu-0":
            first_in.set()
            if not second_in.wait(BOUND_S):
                raise ProbeError("the destroy on npu-1 did not start while npu-0's ran")
        elif op == "destroy":
            second_in.set()

    table.gate = gate
    errors: dict[ClaimUID, str | None] = {}
    first = threading.Thread(target=lambda: errors.update(gated.preparer.unprepare([a])))
    first.start()
    assert first_in.wait(BOUND_S)
    assert gated.preparer.unprepare([b]) == {b.uid: None}
    first.join(BOUND_S)
    assert errors == {a.uid: None}
    assert gated.checkpoints.load().claims == {}
    assert [gated.table.vnpus(device=gated.chip(c)) for c in ("npu-0", "npu-1")] == [(), ()]


def test_creates_on_one_chip_run_one_at_a_time(gated: Node) -> None:
    table = _gated(gated)
    first_in, go = threading.Event(), threading.Event()
    entered: list[str] = []

    def gate(op: str, chip: str) -> None:
        entered.append(chip)
        if len(entered) == 1:
            first_in.set()
            assert go.wait(BOUND_S)

    table.gate = gate
    a, b = gated.claim("a", VIR05.format(0, 0)), gated.claim("b", VIR05.format(0, 1))
    first = Background(gated.preparer, a)
    assert first_in.wait(BOUND_S)
    second = Background(gated.preparer, b)
    _until(lambda: b.uid in gated.checkpoints.load().claims)  # b is recorded: create is next
    assert not _entered_twice(entered)  # b waits for npu-0's lock while a's create runs
    go.set()
    assert first.outcome().error is None
    assert second.outcome().error is None
    assert table.most == {"npu-0": 1}
    assert [v.vnpu_id for v in gated.table.vnpus(device=gated.chip("npu-0"))] == [100, 101]


def test_a_claim_whose_vnpu_is_being_created_is_not_answered_from_its_record(
    gated: Node,
) -> None:
    """The record is saved before the create runs; a retry of the prepare (or an unprepare)
    meanwhile gets an error to retry, never "prepared" for a vNPU that is not there yet."""
    table = _gated(gated)
    inside, go = threading.Event(), threading.Event()

    def gate(op: str, chip: str) -> None:
        if op == "create":
            inside.set()
            assert go.wait(BOUND_S)

    table.gate = gate
    ref = gated.claim("a", VIR05.format(2, 0))
    first = Background(gated.preparer, ref)
    assert inside.wait(BOUND_S)
    again = gated.preparer.prepare([ref])[ref.uid]
    assert again.error is not None
    assert "another call is creating or destroying its vNPUs" in again.error
    gone = gated.preparer.unprepare([ref])[ref.uid]
    assert gone is not None
    assert "another call is creating or destroying its vNPUs" in gone
    go.set()
    assert first.outcome().error is None
    assert gated.preparer.prepare([ref])[ref.uid].error is None
    assert gated.preparer.unprepare([ref]) == {ref.uid: None}
    assert gated.table.vnpus(device=gated.chip("npu-2")) == ()


def test_the_reconcile_leaves_a_vnpu_being_created_to_its_prepare(gated: Node) -> None:
    """A start's reconcile that lists the chip after the record was saved but before the create
    ran must not create it too (nor wait for it holding the state lock)."""
    table = _gated(gated)
    inside, go = threading.Event(), threading.Event()

    def gate(op: str, chip: str) -> None:
        if op == "create" and not inside.is_set():
            inside.set()
            assert go.wait(BOUND_S)

    table.gate = gate
    ref = gated.claim("a", VIR05.format(4, 0))
    first = Background(gated.preparer, ref)
    assert inside.wait(BOUND_S)
    reports: list[RepairReport] = []
    reconcile = threading.Thread(target=lambda: reports.append(gated.preparer.repair_hardware()))
    reconcile.start()
    reconcile.join(BOUND_S)
    assert not reconcile.is_alive(), "the reconcile waited for the create in flight"
    assert reports[0].unrepairable == ()
    assert reports[0].foreign == ()
    go.set()
    assert first.outcome().error is None
    assert table.most == {"npu-4": 1}
    assert [v.vnpu_id for v in gated.table.vnpus(device=gated.chip("npu-4"))] == [164]


@pytest.fixture
def smi(tmp_path: Path) -> tuple[Node, FakeNpuSmi]:
    fake = FakeNpuSmi(tmp_path / "npu-smi", {**load_scenario("910B4_8npu"), "vnpu": "910B4"})
    hardware = FakeHardware({"chip": "910B4", "count": 8, "vnpu": "910B4"}, node=NODE)
    return Node(NpuSmiVnpuTable(npu_smi=fake.path), hardware), fake


def _calls_of(fake: FakeNpuSmi, run: Callable[[], object]) -> list[str]:
    before = len(fake.calls())
    run()
    return [" ".join(c.split()[:3]) for c in fake.calls()[before:]]


def test_a_create_and_a_destroy_are_one_npu_smi_call_each(
    smi: tuple[Node, FakeNpuSmi],
) -> None:
    node, fake = smi
    assert node.table.create(device=node.chip("npu-0"), template="vir05_1c_8g", vnpu_id=100)
    node.preparer.repair()  # the start: the survey lists every chip once
    ref = node.claim("a", VIR05.format(0, 0))
    outcomes: dict[ClaimUID, ClaimOutcome] = {}
    calls = _calls_of(fake, lambda: outcomes.update(node.preparer.prepare([ref])))
    assert outcomes[ref.uid].error is None
    assert calls == ["set -t create-vnpu"]
    recorded = node.checkpoints.load().claims[ref.uid].devices[0].vnpu
    assert recorded is not None
    assert recorded.vnpu_id == 101  # 100 is someone else's
    assert _calls_of(fake, lambda: node.preparer.unprepare([ref])) == ["set -t destroy-vnpu"]
    listed = [v.vnpu_id for v in node.table.vnpus(device=node.chip("npu-0"))]
    assert listed == [100]


def test_a_refused_create_reads_the_chip_again_and_reports_npu_smi(
    smi: tuple[Node, FakeNpuSmi],
) -> None:
    node, fake = smi
    node.preparer.repair()
    fake.set_fault(["set", "-t", "create-vnpu"], exit=1, stdout="create vnpu failed.\n")
    ref = node.claim("a", VIR05.format(3, 0))
    outcomes: dict[ClaimUID, ClaimOutcome] = {}
    calls = _calls_of(fake, lambda: outcomes.update(node.preparer.prepare([ref])))
    error = outcomes[ref.uid].error
    assert error is not None
    assert "`npu-smi set -t create-vnpu -i 3 -c 0" in error
    assert "create vnpu failed." in error
    assert calls == ["set -t create-vnpu", "info -t info-vnpu"]
    assert node.checkpoints.load().claims == {}
    assert node.cdi.read(uid=ref.uid) is None
    fake.clear_faults()
    calls = _calls_of(fake, lambda: outcomes.update(node.preparer.prepare([ref])))
    assert outcomes[ref.uid].error is None
    assert calls == ["info -t info-vnpu", "set -t create-vnpu"]  # the chip read once again


def _until(condition: Callable[[], bool]) -> None:
    event = threading.Event()
    for _ in range(int(BOUND_S / 0.01)):
        if condition():
            return
        event.wait(0.01)
    raise AssertionError("the condition did not hold in time")


def _entered_twice(entered: list[str]) -> bool:
    """Whether a second create started, given a moment to (a create about to start has had
    time to: b's record is saved and only its chip's lock stands between it and the table)."""
    threading.Event().wait(0.3)
    return len(entered) > 1
