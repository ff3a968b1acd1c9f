"""The vNPU reconcile after a start, and vNPU offers npu-smi cannot give.

A vNPU no checkpoint record names was not made by this plugin (an earlier install's, an
operator's, one a running container may use): it is reported and left as it is, even where
destroying it would work. A recorded vNPU that vanished is recreated; a chip that cannot be listed
leaves the reconcile waiting and changes nothing. A vNPU answer that cannot be read publishes the
chips whole, asking once per probe, said once in the log.
"""

from __future__ import annotations

import logging

import attrs
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
from npu_dra.domain.device import Device, NodeInventory
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
OURS = "npu-0-vir05-1c-16g-0"  # vNPU id 100 once prepared
FOREIGN = 107  # made by hand on npu-0
BROKEN = "`npu-smi info -t info-vnpu` line 5: '2O' is not a number"


class Table:
    """The fake vNPU table; counts destroys and offer questions, and answers `broken` (as an
    unreadable npu-smi answer) to listings and offers while it is set."""

    def __init__(self, inner: FakeVnpuTable) -> None:
        self.inner = inner
        self.destroyed: list[int] = []
        self.offers_asked = 0
        self.broken: str | None = None

    def vnpu_offer(self, *, device: Device) -> VnpuOffer | None:
        self.offers_asked += 1
        if self.broken:
            raise ProbeError(self.broken)
        return self.inner.vnpu_offer(device=device)

    def vnpus(self, *, device: Device) -> tuple[Vnpu, ...]:
        if self.broken:
            raise ProbeError(self.broken)
        return self.inner.vnpus(device=device)

    def create(self, *, device: Device, template: str, vnpu_id: int) -> Vnpu:
        return self.inner.create(device=device, template=template, vnpu_id=vnpu_id)

    def destroy(self, *, device: Device, vnpu_id: int) -> None:
        self.destroyed.append(vnpu_id)
        self.inner.destroy(device=device, vnpu_id=vnpu_id)


class Node:
    def __init__(self) -> None:
        self.cluster = MemoryCluster()
        self.cdi = MemoryCdiStore()
        self.checkpoints = MemoryCheckpointStore()
        self.hardware = FakeHardware(HARDWARE, node=NODE)
        fake = self.hardware.vnpu_table()
        assert fake is not None
        self.table = Table(fake)
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

    def claim(self, name: str, device: str) -> ClaimRef:
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
        result = AllocationResult(RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(device))
        self.cluster.set_allocation(ref, Allocation((result,), NODE))
        return ref

    def chip0(self) -> Device:
        chip = self.hardware.probe().get(DeviceName("npu-0"))
        assert chip is not None
        return chip

    def vnpu_ids(self) -> list[int]:
        return [v.vnpu_id for v in self.table.inner.vnpus(device=self.chip0())]

    def made_by_hand(self) -> None:
        self.table.inner.create(device=self.chip0(), template="vir10_3c_32g", vnpu_id=FOREIGN)


@pytest.fixture
def node() -> Node:
    return Node()


def test_a_vnpu_no_record_names_is_reported_and_never_destroyed(node: Node) -> None:
    ours = node.claim("ours", OURS)
    assert node.preparer.prepare([ours])[ours.uid].error is None
    node.made_by_hand()
    report = node.start().repair()
    assert report.foreign == (f"vNPU {FOREIGN} (vir10_3c_32g) on npu-0",)
    assert report.unrepairable == ()
    assert node.vnpu_ids() == [100, FOREIGN]
    assert node.table.destroyed == []


def test_unprepare_destroys_the_claims_own_vnpu_and_nothing_else(node: Node) -> None:
    ours = node.claim("ours", OURS)
    node.preparer.prepare([ours])
    node.made_by_hand()
    node.start().repair()
    assert node.preparer.unprepare([ours]) == {ours.uid: None}
    assert node.table.destroyed == [100]
    assert node.vnpu_ids() == [FOREIGN]


def test_a_chip_that_cannot_be_listed_leaves_the_reconcile_waiting_and_changing_nothing(
    node: Node,
) -> None:
    ours = node.claim("ours", OURS)
    node.preparer.prepare([ours])
    node.table.inner.destroy(device=node.chip0(), vnpu_id=100)  # vanished behind our back
    preparer = node.start()
    node.table.broken = BROKEN
    report = preparer.repair_hardware()
    assert report.waiting is not None
    assert report.waiting.startswith("cannot list the vNPUs of npu-0: ")
    assert BROKEN in report.waiting
    assert node.vnpu_ids() == []
    node.table.broken = None
    again = preparer.repair_hardware()
    assert (again.waiting, again.unrepairable) == (None, ())
    assert node.vnpu_ids() == [100]


def test_a_vnpu_prepared_while_the_chips_were_listed_is_neither_foreign_nor_recreated(
    node: Node,
) -> None:
    service = VnpuService(table=node.table, checkpoints=node.checkpoints)
    inventory = node.hardware.probe()
    before = Checkpoint()
    ours = node.claim("ours", OURS)
    node.preparer.prepare([ours])  # after the snapshot, before the survey's listing
    survey = service.survey(before, inventory)
    done = service.restore(service.plan_restore(survey, node.checkpoints.load()), inventory)
    assert (done.foreign, done.problems) == ((), ())
    assert node.vnpu_ids() == [100]


def test_unreadable_vnpu_offers_publish_whole_chips_asking_once_a_probe_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    hardware = FakeHardware(HARDWARE, node=NODE)
    fake = hardware.vnpu_table()
    assert fake is not None
    table = Table(fake)
    table.broken = BROKEN
    probe = VnpuProbe(hardware, table)
    inventories = [probe.probe() for _ in range(3)]
    assert [dict(i.vnpu_offers) for i in inventories] == [{}, {}, {}]
    assert [len(i.devices) for i in inventories] == [2, 2, 2]
    assert table.offers_asked == 3
    table.broken = None
    assert set(probe.probe().vnpu_offers) == {"npu-0", "npu-1"}
    said = [r.getMessage() for r in caplog.records]
    assert sum(BROKEN in m for m in said) == 1
    assert sum("vNPU offers read again" in m for m in said) == 1


class MovedChip:
    """The hardware after a reboot in which npu-0's name went to another chip (PCI address)."""

    def __init__(self, hardware: FakeHardware) -> None:
        self._hardware = hardware

    def probe(self) -> NodeInventory:
        found = self._hardware.probe()
        devices = tuple(
            attrs.evolve(d, pci_bus_id="0000:99:00.0") if d.name == "npu-0" else d
            for d in found.devices
        )
        return attrs.evolve(found, devices=devices)


def test_after_a_reboot_a_vnpu_is_made_again_only_on_the_chip_it_was_made_on(node: Node) -> None:
    ours = node.claim("ours", OURS)
    assert node.preparer.prepare([ours])[ours.uid].error is None
    node.table.inner.destroy(device=node.chip0(), vnpu_id=100)  # the reboot emptied the table
    moved = ClaimPreparer(
        cluster=node.cluster, cdi=node.cdi, checkpoints=node.checkpoints,
        inventory=InventoryCache(VnpuProbe(MovedChip(node.hardware), node.table)),  # type: ignore[arg-type]
        driver=DRIVER, profile=ASCEND_NPU,
        vnpus=VnpuService(table=node.table, checkpoints=node.checkpoints),
    )  # fmt: skip
    report = moved.repair_hardware()
    assert [ref.uid for ref, _ in report.gone] == [ours.uid]
    assert node.vnpu_ids() == []  # not made on the chip that now carries npu-0's name
    assert node.cdi.read(uid=ours.uid) is None
    report = node.start().repair_hardware()  # the same chip after the reboot: made again
    assert report.gone == ()
    assert node.vnpu_ids() == [100]
    assert node.cdi.read(uid=ours.uid) is not None
