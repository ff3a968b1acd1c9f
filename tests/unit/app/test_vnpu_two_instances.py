"""vNPUs × per-pod sockets: two plugin instances over one data directory (a seamless upgrade) make
a claim's vNPUs outside the lock they share. An unprepare the kubelet sends to the other instance
while the first still makes the claim's vNPU leaves no vNPU behind: the first destroys what it
made and answers an error, and the checkpoint holds nothing for the claim."""

import threading
from pathlib import Path

from npu_dra.adapters.cancel_marks import CancelMarks
from npu_dra.adapters.cdi.files import FileCdiStore
from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.vnpu_probe import VnpuProbe
from npu_dra.adapters.instance_lock import InstanceLock
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.vnpu import VnpuService
from npu_dra.domain.profile import ASCEND_NPU
from tests.unit.app.test_vnpu_parallel import BOUND_S, DRIVER, NODE, VIR05, Background, GatedTable
from tests.unit.app.test_vnpu_parallel import Node as OneInstance


class Instance(OneInstance):
    """One plugin process over the node's data directory, its chips' table shared."""

    def __init__(
        self, data: Path, table: GatedTable, hardware: FakeHardware, cluster: MemoryCluster
    ) -> None:
        super().__init__(table, hardware)
        self.cluster = cluster  # one API server
        checkpoints = FileCheckpointStore(data / "checkpoint.json")
        self.preparer = ClaimPreparer(
            cluster=self.cluster,
            cdi=FileCdiStore(data / "cdi", driver=DRIVER, cdi_class=ASCEND_NPU.cdi_class),
            checkpoints=checkpoints,
            inventory=InventoryCache(VnpuProbe(hardware, table)),
            driver=DRIVER,
            profile=ASCEND_NPU,
            vnpus=VnpuService(table=table, checkpoints=checkpoints),
            shared=InstanceLock(data / "serialize.lock"),
            marks=CancelMarks(data / "unprepared"),
        )


def test_an_unprepare_through_the_other_instance_while_a_vnpu_is_made_leaves_none(
    tmp_path: Path,
) -> None:
    hardware = FakeHardware({"chip": "910B4", "count": 8, "vnpu": "910B4"}, node=NODE)
    fake = hardware.vnpu_table()
    assert fake is not None
    table = GatedTable(fake)
    cluster = MemoryCluster()
    old, new = (Instance(tmp_path, table, hardware, cluster) for _ in range(2))
    creating, go_on = threading.Event(), threading.Event()

    def gate(op: str, chip: str) -> None:
        if op == "create":
            creating.set()
            go_on.wait(BOUND_S)

    table.gate = gate
    ref = old.claim("a", VIR05.format(0, 0))
    made = Background(old.preparer, ref)
    assert creating.wait(BOUND_S), "the vNPU create never started"
    first = new.preparer.unprepare([ref])  # the kubelet gave up on the old instance's prepare
    go_on.set()
    answer = made.outcome()

    assert "unprepared through the other plugin instance" in str(answer.error), answer
    assert table.vnpus(device=old.chip("npu-0")) == ()
    assert new.preparer.unprepare([ref]) == {ref.uid: None}  # a retry of `first`, if it failed
    assert FileCheckpointStore(tmp_path / "checkpoint.json").load().claims == {}
    assert set(first) == {ref.uid}


def test_recreating_a_vanished_vnpu_holds_no_other_call(tmp_path: Path) -> None:
    """The start-up repair recreates a vNPU that vanished (a reboot, a driver reload) with
    npu-smi calls outside the state lock: a hung create holds neither another claim's prepare
    nor an unprepare; the claim being restored answers "retry" meanwhile, never half-done."""
    hardware = FakeHardware({"chip": "910B4", "count": 8, "vnpu": "910B4"}, node=NODE)
    fake = hardware.vnpu_table()
    assert fake is not None
    table = GatedTable(fake)
    node = Instance(tmp_path, table, hardware, MemoryCluster())
    restored, other = node.claim("a", VIR05.format(0, 0)), node.claim("b", "npu-5")
    assert node.preparer.prepare([restored])[restored.uid].error is None
    (vanished,) = table.vnpus(device=node.chip("npu-0"))
    fake.destroy(device=node.chip("npu-0"), vnpu_id=vanished.vnpu_id)
    creating, go_on = threading.Event(), threading.Event()

    def gate(op: str, chip: str) -> None:
        if op == "create":
            creating.set()
            go_on.wait(BOUND_S)

    table.gate = gate
    repair = threading.Thread(target=node.preparer.repair_hardware)
    repair.start()
    try:
        assert creating.wait(BOUND_S), "the repair never recreated the vNPU"
        assert node.preparer.prepare([other])[other.uid].error is None
        busy = node.preparer.unprepare([restored])[restored.uid]
        assert repair.is_alive()  # all of that while the create still hung
    finally:
        go_on.set()
        repair.join(BOUND_S)
    assert "retry" in str(busy)
    assert [v.vnpu_id for v in table.vnpus(device=node.chip("npu-0"))] == [vanished.vnpu_id]
    assert node.preparer.unprepare([restored]) == {restored.uid: None}
