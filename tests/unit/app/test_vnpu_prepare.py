"""Preparing claims allocated vNPUs: the vNPU is created through the hardware's table,
recorded in the checkpoint first, injected as /dev/vdavinci<id>, destroyed at unprepare, and a
restart reconciles the table with the checkpoint. Crashes are injected at each step (a
BaseException the preparer does not catch, as a process death would leave things)."""

import pytest

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.fake_vnpu import FakeVnpuTable
from npu_dra.adapters.hardware.vnpu_probe import VnpuProbe
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.vnpu import VnpuService
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef
from npu_dra.domain.device import Device
from npu_dra.domain.ids import (
    ClaimName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.profile import ASCEND_NPU
from npu_dra.domain.vnpu.instance import Vnpu
from npu_dra.domain.vnpu.templates import VnpuOffer

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
HARDWARE = {"chip": "910B4-1", "count": 2, "vnpu": "910B4-1"}
VIR05 = "npu-0-vir05-1c-16g-{}"


class Crash(BaseException):
    """The process dies here."""


class CrashingTable:
    """The fake table, dying just before (or after) the next create or destroy when armed."""

    def __init__(self, inner: FakeVnpuTable) -> None:
        self.inner = inner
        self.crash: tuple[str, str] | None = None  # ("create"|"destroy", "before"|"after")
        self.refuse: str | None = None  # the next create fails with this hardware answer

    def vnpu_offer(self, *, device: Device) -> VnpuOffer | None:
        return self.inner.vnpu_offer(device=device)

    def vnpus(self, *, device: Device) -> tuple[Vnpu, ...]:
        return self.inner.vnpus(device=device)

    def create(self, *, device: Device, template: str, vnpu_id: int) -> Vnpu:
        if self.refuse:
            raise ProbeError(self.refuse)
        self._maybe("create", "before")
        made = self.inner.create(device=device, template=template, vnpu_id=vnpu_id)
        self._maybe("create", "after")
        return made

    def destroy(self, *, device: Device, vnpu_id: int) -> None:
        self._maybe("destroy", "before")
        self.inner.destroy(device=device, vnpu_id=vnpu_id)
        self._maybe("destroy", "after")

    def _maybe(self, op: str, when: str) -> None:
        if self.crash == (op, when):
            self.crash = None
            raise Crash(f"{op} {when}")


class Node:
    """A node's stores and hardware; `start()` is one plugin process over them."""

    def __init__(self) -> None:
        self.cluster = MemoryCluster()
        self.cdi = MemoryCdiStore()
        self.checkpoints = MemoryCheckpointStore()
        self.hardware = FakeHardware(HARDWARE, node=NODE)
        fake = self.hardware.vnpu_table()
        assert fake is not None
        self.table = CrashingTable(fake)
        self.preparer = self.start()

    def start(self) -> ClaimPreparer:
        self.preparer = ClaimPreparer(
            cluster=self.cluster,
            cdi=self.cdi,
            checkpoints=self.checkpoints,
            inventory=InventoryCache(VnpuProbe(self.hardware, self.table)),
            driver=DRIVER,
            profile=ASCEND_NPU,
            vnpus=VnpuService(table=self.table, checkpoints=self.checkpoints),
        )
        return self.preparer

    def claim(self, name: str, *devices: str) -> ClaimRef:
        created = self.cluster.create(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "npu", "exactly": {"deviceClassName": "npu"}}]
                    }
                },
            }
        )
        ref = ClaimRef(Namespace("default"), ClaimName(name), created["metadata"]["uid"])
        results = tuple(
            AllocationResult(RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(d))
            for d in devices
        )
        self.cluster.set_allocation(ref, Allocation(results, NODE))
        return ref

    def vnpu_ids(self) -> list[int]:
        return [v.vnpu_id for v in self.table.vnpus(device=self.chip0())]

    def chip0(self) -> Device:
        chip = self.hardware.probe().get(DeviceName("npu-0"))
        assert chip is not None
        return chip

    def recorded(self) -> Checkpoint:
        return self.checkpoints.load()


@pytest.fixture
def node() -> Node:
    return Node()


def test_a_vnpu_claim_gets_a_vnpu_injected_as_vdavinci(node: Node) -> None:
    ref = node.claim("a", VIR05.format(0))
    outcome = node.preparer.prepare([ref])[ref.uid]
    assert outcome.error is None
    assert node.table.vnpus(device=node.chip0()) == (Vnpu(100, "vir05_1c_16g", 0),)
    spec = node.cdi.read(uid=ref.uid)
    assert spec is not None
    (device,) = spec.devices
    (dev_node,) = device.edits.device_nodes
    assert (dev_node.path, dev_node.host_path) == ("/dev/davinci100", "/dev/vdavinci100")
    assert "ASCEND_VISIBLE_DEVICES=100" in spec.edits.env
    assert "/dev/davinci_manager" in [n.path for n in spec.edits.device_nodes]
    (prepared,) = node.recorded().claims[ref.uid].devices
    assert prepared.vnpu is not None
    assert (prepared.vnpu.vnpu_id, prepared.vnpu.chip, prepared.vnpu.template) == (
        100, "npu-0", "vir05_1c_16g",
    )  # fmt: skip
    assert outcome.devices[0].cdi_ids == (f"k8s.npu.huawei.com/npu={ref.uid}-{VIR05.format(0)}",)


def test_prepare_again_makes_no_second_vnpu(node: Node) -> None:
    ref = node.claim("a", VIR05.format(0))
    node.preparer.prepare([ref])
    node.cdi.remove(uid=ref.uid)  # a tmpfs CDI dir lost over a reboot
    assert node.preparer.prepare([ref])[ref.uid].error is None
    assert node.vnpu_ids() == [100]
    assert node.cdi.read(uid=ref.uid) is not None


def test_two_claims_on_one_chip_get_two_ids(node: Node) -> None:
    a, b = node.claim("a", VIR05.format(0)), node.claim("b", VIR05.format(1))
    outcomes = node.preparer.prepare([a, b])
    assert [o.error for o in outcomes.values()] == [None, None]
    assert node.vnpu_ids() == [100, 101]


def test_unprepare_destroys_the_vnpu(node: Node) -> None:
    ref = node.claim("a", VIR05.format(0))
    node.preparer.prepare([ref])
    assert node.preparer.unprepare([ref]) == {ref.uid: None}
    assert node.vnpu_ids() == []
    assert node.recorded().claims == {}


def test_hardware_refusal_leaves_no_vnpu_and_no_record(node: Node) -> None:
    ref = node.claim("a", VIR05.format(0), VIR05.format(1))
    node.table.refuse = None
    original = node.table.inner.create
    calls = iter(range(10))

    def second_fails(*, device: Device, template: str, vnpu_id: int) -> Vnpu:
        if next(calls) == 1:
            raise ProbeError("create vnpu failed.")
        return original(device=device, template=template, vnpu_id=vnpu_id)

    node.table.inner.create = second_fails  # type: ignore[method-assign]
    outcome = node.preparer.prepare([ref])[ref.uid]
    assert outcome.error is not None
    assert "creating its vNPU failed: create vnpu failed." in outcome.error
    assert node.vnpu_ids() == []
    assert node.recorded().claims == {}
    assert node.cdi.read(uid=ref.uid) is None


CRASH_POINTS = [("create", "before"), ("create", "after")]


@pytest.mark.parametrize("point", CRASH_POINTS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_a_crash_while_preparing_leaves_one_vnpu_after_restart(
    node: Node, point: tuple[str, str]
) -> None:
    ref = node.claim("a", VIR05.format(0))
    node.table.crash = point
    with pytest.raises(Crash):
        node.preparer.prepare([ref])
    assert ref.uid in node.recorded().claims  # recorded before create-vnpu ran
    report = node.start().repair()
    assert report.unrepairable == ()
    assert node.vnpu_ids() == [100]
    assert node.preparer.prepare([ref])[ref.uid].error is None  # the kubelet's retry
    assert node.vnpu_ids() == [100]
    assert node.cdi.read(uid=ref.uid) is not None


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_crash_while_unpreparing_is_finished_by_the_retry(node: Node, when: str) -> None:
    ref = node.claim("a", VIR05.format(0))
    node.preparer.prepare([ref])
    node.table.crash = ("destroy", when)
    with pytest.raises(Crash):
        node.preparer.unprepare([ref])
    node.start().repair()
    assert node.preparer.unprepare([ref]) == {ref.uid: None}
    assert node.vnpu_ids() == []
    assert node.recorded().claims == {}


def test_restart_reports_a_vnpu_no_claim_holds_and_keeps_it(node: Node) -> None:
    """#24: a vNPU the plugin did not create (an earlier install's, or made by hand, maybe in
    use by a running container) is reported, never destroyed."""
    node.table.create(device=node.chip0(), template="vir10_3c_32g", vnpu_id=107)
    report = node.start().repair()
    assert node.vnpu_ids() == [107]
    assert report.foreign == ("vNPU 107 (vir10_3c_32g) on npu-0",)
    assert report.unrepairable == ()


def test_restart_reports_a_vanished_vnpu_it_cannot_recreate(node: Node) -> None:
    ref = node.claim("a", VIR05.format(0))
    node.preparer.prepare([ref])
    node.table.destroy(device=node.chip0(), vnpu_id=100)
    node.table.refuse = "create vnpu failed."
    report = node.start().repair()
    assert len(report.unrepairable) == 1
    assert "vNPU 100 vanished and was not recreated" in report.unrepairable[0]


def test_a_vnpu_of_a_chip_held_whole_is_refused(node: Node) -> None:
    whole = node.claim("whole", "npu-0")
    assert node.preparer.prepare([whole])[whole.uid].error is None
    part = node.claim("part", VIR05.format(0))
    error = node.preparer.prepare([part])[part.uid].error
    assert error is not None
    assert "already prepared for claim" in error
    assert node.vnpu_ids() == []


def test_the_whole_chip_is_refused_while_a_vnpu_of_it_is_prepared(node: Node) -> None:
    part = node.claim("part", VIR05.format(0))
    assert node.preparer.prepare([part])[part.uid].error is None
    whole = node.claim("whole", "npu-0")
    error = node.preparer.prepare([whole])[whole.uid].error
    assert error is not None
    assert f"already prepared for claim {part.uid}" in error
    other = node.claim("other", "npu-1")
    assert node.preparer.prepare([other])[other.uid].error is None
