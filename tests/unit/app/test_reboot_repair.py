"""After a reboot: the claims still prepared get their CDI specs back before the plugin serves,
each device checked to be the one prepared; a claim whose device is gone, or whose device's name
is now another chip, is reported (an Event on the claim, the metric) and never re-pointed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import attrs
import pytest

from npu_dra.adapters.boot_id import BootIds
from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.kubelet_plugin.metrics_server import claims_device_gone
from npu_dra.app.services.hardware_reconcile import HardwareReconcile
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.reboot import RebootCheck
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.errors import StateError
from npu_dra.domain.events import ClusterEvent
from npu_dra.domain.ids import ClaimName, DriverName, Namespace, NodeName
from npu_dra.domain.profile import ASCEND_NPU
from tests.support.kubelet import allocated_claim

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
HARDWARE = {"chip": "910B4", "count": 4}


class Rebooted:
    """The node's chips after a reboot: `moved` names now on another PCI address (another
    chip), `gone` names no longer there."""

    def __init__(self, *, moved: tuple[str, ...] = (), gone: tuple[str, ...] = ()) -> None:
        self._hardware = FakeHardware(HARDWARE, node=NODE)
        self._moved, self._gone = moved, gone

    def probe(self) -> NodeInventory:
        found = self._hardware.probe()
        devices = tuple(
            attrs.evolve(d, pci_bus_id="0000:99:00.0") if d.name in self._moved else d
            for d in found.devices
            if d.name not in self._gone
        )
        return attrs.evolve(found, devices=devices)


class Node:
    def __init__(self) -> None:
        self.cluster, self.cdi = MemoryCluster(), MemoryCdiStore()
        self.checkpoints = MemoryCheckpointStore()
        first = self.preparer(InventoryCache(FakeHardware(HARDWARE, node=NODE)))
        self.refs = [self.claim(f"claim-{i}", f"npu-{i}") for i in range(3)]
        assert all(o.error is None for o in first.prepare(self.refs).values())

    def preparer(self, inventory: InventoryCache) -> ClaimPreparer:
        return ClaimPreparer(
            cluster=self.cluster, cdi=self.cdi, checkpoints=self.checkpoints,
            inventory=inventory, driver=DRIVER, profile=ASCEND_NPU,
        )  # fmt: skip

    def claim(self, name: str, device: str) -> ClaimRef:
        made = self.cluster.create(allocated_claim(name, [device], namespace="default", pool=NODE))
        meta = made["metadata"]
        return ClaimRef(Namespace(meta["namespace"]), ClaimName(meta["name"]), meta["uid"])

    def reboot(self, hardware: Rebooted) -> tuple[ClaimPreparer, InventoryCache]:
        for ref in self.refs:  # a tmpfs CDI directory is empty after a reboot
            self.cdi.remove(uid=ref.uid)
        inventory = InventoryCache(hardware)
        return self.preparer(inventory), inventory


class Events:
    """The event sink's emit, kept."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str]] = []

    def emit(self, event: ClusterEvent) -> None:
        self.sent.append((event.regarding.name, event.reason, event.note))


def test_a_reboot_brings_back_the_specs_of_claims_whose_chips_are_the_same() -> None:
    node = Node()
    preparer, _ = node.reboot(Rebooted())
    report = preparer.repair_hardware()
    assert report.gone == ()
    assert set(report.rewritten) == {ref.uid for ref in node.refs}
    assert all(node.cdi.read(uid=ref.uid) is not None for ref in node.refs)


def test_a_claim_whose_chip_is_another_or_gone_gets_no_spec_and_is_reported() -> None:
    node = Node()
    for ref in node.refs[1:]:  # specs that survived the reboot (a CDI dir on disk)
        assert node.cdi.read(uid=ref.uid) is not None
    preparer, inventory = node.reboot(Rebooted(moved=("npu-1",), gone=("npu-2",)))
    events = Events()
    reconcile = HardwareReconcile(
        attempt=preparer.repair_hardware, what="CDI spec check", node=NODE,
        events=events,  # type: ignore[arg-type]
    )  # fmt: skip
    report = reconcile.run_once()
    assert report.rewritten == (node.refs[0].uid,)
    gone = dict(report.gone)
    assert set(gone) == set(node.refs[1:])
    assert "npu-1 is now pci:0000:99:00.0, prepared as pci:0000:c2:00.0" in gone[node.refs[1]]
    assert "npu-2 is gone from this node" in gone[node.refs[2]]
    assert node.cdi.read(uid=node.refs[1].uid) is None  # not pointed at the other chip
    assert sorted((name, reason) for name, reason, _ in events.sent) == [
        ("claim-1", "PreparedDeviceGone"),
        ("claim-2", "PreparedDeviceGone"),
    ]
    assert claims_device_gone(inventory, node.checkpoints) == 2.0
    assert reconcile.finished.is_set()  # the hardware answered: nothing left for the thread


def test_a_claim_whose_chip_moved_is_refused_when_prepared_again() -> None:
    node = Node()
    preparer, _ = node.reboot(Rebooted(moved=("npu-0",)))
    outcome = preparer.prepare(node.refs[:1])[node.refs[0].uid]
    assert outcome.error is not None
    assert "npu-0 is now pci:0000:99:00.0" in outcome.error


class Boots:
    def __init__(self, current: str | None, last: str | None) -> None:
        self._current, self.last_id = current, last

    def current(self) -> str:
        if self._current is None:
            raise StateError("--boot-id-file /x: No such file or directory")
        return self._current

    def last(self) -> str | None:
        return self.last_id

    def remember(self, boot_id: str) -> None:
        self.last_id = boot_id

    def remove_temp_files(self) -> tuple[str, ...]:
        return ()


@pytest.mark.parametrize(
    ("current", "last", "new"),
    [("b", "b", False), ("b", "a", True), ("b", None, True), (None, "a", True)],
    ids=["same-boot", "rebooted", "none-recorded", "unreadable"],
)
def test_a_new_boot_is_one_not_recorded_as_repaired(
    current: str | None, last: str | None, new: bool
) -> None:
    assert RebootCheck(Boots(current, last)).new_boot() is new


def test_the_boot_is_recorded_only_once_a_pass_ran_with_the_hardware_answering() -> None:
    node = Node()
    boots = Boots("boot-2", "boot-1")
    check = RebootCheck(boots)
    assert check.new_boot()
    failing, _ = node.reboot(Rebooted())
    attempt = check.recorded(
        lambda: attrs.evolve(failing.repair_hardware(), waiting="no inventory")
    )
    attempt()
    assert boots.last_id == "boot-1"
    check.recorded(failing.repair_hardware)()
    assert boots.last_id == "boot-2"


def test_boot_ids_read_the_kernel_file_and_record_the_repaired_boot(tmp_path: Path) -> None:
    source = tmp_path / "boot_id"
    source.write_text("0F1E2D3C-aaaa-bbbb-cccc-000000000001\n")
    boots = BootIds(source, tmp_path / "data")
    assert boots.current() == "0f1e2d3c-aaaa-bbbb-cccc-000000000001"
    assert boots.last() is None
    boots.remember(boots.current())
    assert BootIds(source, tmp_path / "data").last() == boots.current()
    assert (tmp_path / "data" / "boot-id").stat().st_mode & 0o777 == 0o600


def test_an_unreadable_or_hostile_boot_id_is_an_error_naming_the_flag(tmp_path: Path) -> None:
    with pytest.raises(StateError, match=r"--boot-id-file .*missing: No such file"):
        BootIds(tmp_path / "missing", tmp_path).current()
    (tmp_path / "boot_id").write_text("../../etc/passwd\n")
    with pytest.raises(StateError, match="not a boot id"):
        BootIds(tmp_path / "boot_id", tmp_path).current()
    (tmp_path / "boot-id").write_text("x" * 500)  # a damaged record: taken as none
    assert BootIds(tmp_path / "boot_id", tmp_path).last() is None


def test_a_record_write_a_kill_cut_short_leaves_no_temp_file_past_the_next_start(
    tmp_path: Path,
) -> None:
    """kill -9 between the temp file and its rename (seen in a kill storm under load): the next
    start removes it; a young one may be another instance's write in flight and stays."""
    source = tmp_path / "boot_id"
    source.write_text("0f1e2d3c-aaaa-bbbb-cccc-000000000001\n")
    data = tmp_path / "data"
    data.mkdir()
    stale, young = data / ".boot-id.c3qc9pgl.tmp", data / ".boot-id.inflight.tmp"
    stale.write_text("0f1e2d3c")
    young.write_text("0f1e2d3c")
    long_ago = time.time() - 3600
    os.utime(stale, (long_ago, long_ago))
    assert RebootCheck(BootIds(source, data)).new_boot()
    assert not stale.exists()
    assert young.exists()
