"""Two plugin instances on one node (a seamless upgrade) over one data directory: with the
instance lock and a fresh read of the checkpoint per state step, a claim prepared through one is
unprepared through the other, and neither loses what the other saved; a claim read waiting on the
API server holds neither instance's other calls, and an unprepare through one instance cancels a
prepare of the same claim still waiting in the other."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from npu_dra.adapters.cancel_marks import CancelMarks
from npu_dra.adapters.cdi.files import FileCdiStore
from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.instance_lock import InstanceLock
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import StateError
from npu_dra.domain.ids import ClaimName, DriverName, Namespace, NodeName
from npu_dra.domain.profile import ASCEND_NPU
from tests.support.kubelet import allocated_claim

NODE, DRIVER = NodeName("n1"), DriverName("npu.huawei.com")


def claim(cluster: MemoryCluster, name: str, device: str) -> ClaimRef:
    made = cluster.create(allocated_claim(name, [device], namespace="default", pool=NODE))
    meta = made["metadata"]
    return ClaimRef(Namespace(meta["namespace"]), ClaimName(meta["name"]), meta["uid"])


class HeldReads:
    """The API server's claim reads, held until `gate` is set (an outage, for the test)."""

    def __init__(self, cluster: MemoryCluster) -> None:
        self.cluster, self.gate, self.waiting = cluster, threading.Event(), threading.Event()

    def get_claim(self, *, ref: ClaimRef) -> object:
        self.waiting.set()
        self.gate.wait(timeout=30)
        return self.cluster.get_claim(ref=ref)


def instance(data: Path, cluster: object, *, shared: bool) -> ClaimPreparer:
    """One plugin process's preparer over the node's data directory and CDI directory."""
    return ClaimPreparer(
        cluster=cluster,  # type: ignore[arg-type]
        cdi=FileCdiStore(data / "cdi", driver=DRIVER, cdi_class=ASCEND_NPU.cdi_class),
        checkpoints=FileCheckpointStore(data / "checkpoint.json"),
        inventory=InventoryCache(FakeHardware({"chip": "910B4", "count": 8}, node=NODE)),
        driver=DRIVER,
        profile=ASCEND_NPU,
        shared=InstanceLock(data / "serialize.lock") if shared else None,
        marks=CancelMarks(data / "unprepared") if shared else None,
    )


def interleave(data: Path, *, shared: bool) -> set[str]:
    """Old and new instance take turns, as the kubelet may send them calls during an upgrade;
    the claim names the checkpoint holds afterwards, as a third reader sees it."""
    cluster = MemoryCluster()
    old, new = instance(data, cluster, shared=shared), instance(data, cluster, shared=shared)
    refs = {name: claim(cluster, name, f"npu-{i}") for i, name in enumerate("abcdef")}
    old.prepare([refs["a"]])
    old.prepare([refs["b"]])  # the old instance has read and saved twice
    new.prepare([refs["c"]])
    old.prepare([refs["d"]])
    new.unprepare([refs["a"]])  # prepared through the old one
    old.prepare([refs["e"]])
    new.prepare([refs["f"]])
    old.unprepare([refs["b"]])
    return {
        c.ref.name for c in FileCheckpointStore(data / "checkpoint.json").load().claims.values()
    }


def test_two_instances_sharing_state_lose_nothing(tmp_path: Path) -> None:
    assert interleave(tmp_path, shared=True) == {"c", "d", "e", "f"}
    specs = {p.name for p in (tmp_path / "cdi").iterdir()}
    assert len(specs) == 4, specs  # a, b unprepared: their specs gone, the other four kept


def test_without_the_shared_state_the_instances_lose_each_others_claims(tmp_path: Path) -> None:
    """Why SharedState exists: each instance's memory is behind the other's saves."""
    assert interleave(tmp_path, shared=False) != {"c", "d", "e", "f"}


def test_a_claim_read_waiting_on_the_api_holds_neither_instance(tmp_path: Path) -> None:
    """Outage × per-pod sockets: the old instance's new claim waits on the API server; the
    new instance's calls, and the old one's other calls, are answered meanwhile."""
    cluster = MemoryCluster()
    reads = HeldReads(cluster)
    old, new = instance(tmp_path, reads, shared=True), instance(tmp_path, cluster, shared=True)
    ready, leaving, fresh = (claim(cluster, n, f"npu-{i}") for i, n in enumerate("abc"))
    new.prepare([ready, leaving])
    stuck = threading.Thread(target=old.prepare, args=([fresh],))
    stuck.start()
    try:
        assert reads.waiting.wait(timeout=30)
        assert new.prepare([ready])[ready.uid].error is None  # from the checkpoint
        assert old.unprepare([leaving]) == {leaving.uid: None}
        assert stuck.is_alive()  # all of that while the read still waited
    finally:
        reads.gate.set()
        stuck.join(timeout=30)
    assert set(new.prepared().claims) == {ready.uid, fresh.uid}


def test_an_unprepare_through_the_other_instance_cancels_a_waiting_prepare(
    tmp_path: Path,
) -> None:
    """The kubelet gave up on a prepare in the old instance and sent the unprepare to the new
    one: the old one's late answer commits nothing, so no claim stays prepared for nobody."""
    cluster = MemoryCluster()
    reads = HeldReads(cluster)
    old, new = instance(tmp_path, reads, shared=True), instance(tmp_path, cluster, shared=True)
    ref = claim(cluster, "a", "npu-0")
    answers: list[object] = []
    stuck = threading.Thread(target=lambda: answers.append(old.prepare([ref])[ref.uid]))
    stuck.start()
    assert reads.waiting.wait(timeout=30)
    assert new.unprepare([ref]) == {ref.uid: None}
    reads.gate.set()
    stuck.join(timeout=30)
    [answer] = answers
    assert "unprepared through the other plugin instance" in str(answer.error)  # type: ignore[attr-defined]
    assert new.prepared().claims == {}
    assert new.prepare([ref])[ref.uid].error is None  # a later prepare of it is not refused


STOPPED_HOLDER = """
import os, signal, sys
from pathlib import Path
from npu_dra.adapters.instance_lock import InstanceLock
with InstanceLock(Path(sys.argv[1])):
    Path(sys.argv[2]).write_text("held")
    os.kill(os.getpid(), signal.SIGSTOP)
"""


def test_a_stopped_holder_ends_the_wait_with_its_pid(tmp_path: Path) -> None:
    """kill -STOP of the instance holding the lock: every call waiting for it fails after a
    bound, naming the holder, instead of hanging silently."""
    marker = tmp_path / "marker"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(STOPPED_HOLDER), str(tmp_path / "lock"), str(marker)]
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists(), "the other process never took the lock"
        expected = rf"held for more than 1s .* by pid {holder.pid} \(stopped\)"
        with pytest.raises(StateError, match=expected), InstanceLock(tmp_path / "lock", 1.0):
            pass
    finally:
        holder.kill()
        holder.wait(timeout=30)


HOLDER = """
import sys, time
from pathlib import Path
from npu_dra.adapters.instance_lock import InstanceLock
with InstanceLock(Path(sys.argv[1])):
    Path(sys.argv[2]).write_text("held")
    time.sleep(1.0)
    Path(sys.argv[2]).write_text("released")
"""


def test_the_lock_holds_off_another_process_until_it_is_released(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(tmp_path / "lock"), str(marker)]
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists(), "the other process never took the lock"
        with InstanceLock(tmp_path / "lock"):
            assert marker.read_text() == "released"
    finally:
        holder.wait(timeout=30)
    assert holder.returncode == 0


def test_a_lock_path_that_is_a_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / "lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StateError, match=r"instance lock .*lock"), InstanceLock(tmp_path / "lock"):
        pass


def test_the_first_start_makes_the_data_directory_for_the_lock(tmp_path: Path) -> None:
    """The first start on a node takes the lock before anything made the plugin's data dir."""
    lock = InstanceLock(tmp_path / "plugins" / "npu.huawei.com" / "serialize.lock")
    with lock:
        assert lock.path.exists()
    assert (lock.path.parent.stat().st_mode & 0o777) == 0o700
