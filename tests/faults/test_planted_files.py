"""Files planted where the plugin reads and writes: the CDI directory (shared with other drivers
and the runtime, so anyone with write access to it) and the plugin's data directory.

A FIFO at a spec's name never blocks a call or the start; a huge file there is never read
whole; a directory, FIFO or link named like a temp file or a spec is reported and left, never
fatal; a link (or a second hard link) at the checkpoint journal's path is never written through.
Calls carry a 30 s deadline: generous (an answer comes in milliseconds), it only bounds how long
a test waits on a call that would otherwise hang for good.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from tests.faults.harness import FaultNode, create_claims, fault_node
from tests.support.controlplane import ControlPlane
from tests.support.kubelet import WireClaim

CALL_S = 30.0
HUGE = 200 << 20  # a sparse file: costs no disk, but 200 MiB to whoever reads it whole
RSS_GROWTH_LIMIT_KIB = 100 << 10  # reading the huge file whole costs at least 200 MiB
SPEC_PREFIX = "k8s.npu.huawei.com-npu_"


def spec_path(node: FaultNode, uid: str) -> Path:
    return node.host.cdi / f"{SPEC_PREFIX}{uid}.json"


def fifo_at(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def peak_rss_kib(node: FaultNode) -> int:
    """The plugin process's peak resident set (VmHWM), in KiB."""
    assert node.plugin is not None
    status = Path(f"/proc/{node.plugin.popen.pid}/status").read_text()
    (line,) = (x for x in status.splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1])


def devices_of(answer: Any) -> list[str]:
    return [d.device_name for d in answer.devices]


def restart(node: FaultNode) -> None:
    assert node.plugin is not None
    node.plugin.kill()
    node.start()


def test_a_fifo_at_a_spec_never_blocks_prepare_unprepare_or_the_start(
    access: ControlPlane,
) -> None:
    with fault_node(access, "fifo") as node:
        first, second = create_claims(node, [["npu-1"], ["npu-2"]])
        node.start()
        with node.kubelet() as kubelet:
            kubelet.prepare([first, second], timeout=CALL_S)
            fifo_at(spec_path(node, first.uid))
            fifo_at(spec_path(node, second.uid))
            again = kubelet.prepare([first], timeout=CALL_S).claims[first.uid]
            gone = kubelet.unprepare([second], timeout=CALL_S).claims[second.uid]
        rewritten = spec_path(node, first.uid).is_file()
        second_left = os.path.lexists(spec_path(node, second.uid))

        fifo_at(spec_path(node, first.uid))
        restart(node)
        with node.kubelet() as kubelet:  # the start-up repair reads every checkpointed spec
            after_restart = kubelet.prepare([first], timeout=CALL_S).claims[first.uid]
        repaired = spec_path(node, first.uid).is_file()

    assert (again.error, devices_of(again)) == ("", ["npu-1"])
    assert rewritten  # the FIFO was replaced by the spec
    assert gone.error == ""
    assert not second_left
    assert (after_restart.error, devices_of(after_restart)) == ("", ["npu-1"])
    assert repaired


def test_a_huge_file_at_a_spec_is_never_read_whole(access: ControlPlane) -> None:
    with fault_node(access, "huge") as node:
        (claim,) = create_claims(node, [["npu-3"]])
        stranger = str(uuid.uuid4())  # a spec name the checkpoint does not hold
        node.start()
        with node.kubelet() as kubelet:
            kubelet.prepare([claim], timeout=CALL_S)
            baseline = peak_rss_kib(node)
            os.truncate(spec_path(node, claim.uid), HUGE)
            again = kubelet.prepare([claim], timeout=CALL_S).claims[claim.uid]
            growth_serving = peak_rss_kib(node) - baseline
        size_serving = spec_path(node, claim.uid).stat().st_size

        os.truncate(spec_path(node, claim.uid), HUGE)
        spec_path(node, stranger).write_bytes(b"")
        os.truncate(spec_path(node, stranger), HUGE)
        restart(node)
        with node.kubelet() as kubelet:
            after_restart = kubelet.prepare([claim], timeout=CALL_S).claims[claim.uid]
            growth_start = peak_rss_kib(node) - baseline
        size_restart = spec_path(node, claim.uid).stat().st_size
        stranger_left = os.path.lexists(spec_path(node, stranger))
        log = node.host.log.read_text()

    assert (again.error, devices_of(again)) == ("", ["npu-3"])
    assert (after_restart.error, devices_of(after_restart)) == ("", ["npu-3"])
    assert size_serving < 1 << 20  # the spec was rewritten
    assert size_restart < 1 << 20
    assert not stranger_left  # a spec the checkpoint does not hold is removed, unread
    assert growth_serving < RSS_GROWTH_LIMIT_KIB, f"peak RSS grew {growth_serving} KiB"
    assert growth_start < RSS_GROWTH_LIMIT_KIB, f"peak RSS grew {growth_start} KiB"
    assert f"{spec_path(node, claim.uid)}" in log
    assert "larger than" in log


def test_foreign_entries_named_like_ours_are_reported_and_never_fail_the_start(
    access: ControlPlane,
) -> None:
    with fault_node(access, "foreign") as node:
        kept, blocked = create_claims(node, [["npu-4"], ["npu-5"]])
        node.start()
        with node.kubelet() as kubelet:
            kubelet.prepare([kept, blocked], timeout=CALL_S)
        assert node.plugin is not None
        node.plugin.kill()
        planted = plant_foreign_entries(node, blocked)
        node.start()
        with node.kubelet() as kubelet:
            prepared = kubelet.prepare([kept], timeout=CALL_S).claims[kept.uid]
            refused = kubelet.prepare([blocked], timeout=CALL_S).claims[blocked.uid]
            unprepared = kubelet.unprepare([blocked], timeout=CALL_S).claims[blocked.uid]
        left = [p for p in planted if os.path.lexists(p)]
        log = node.host.log.read_text()

    assert (prepared.error, devices_of(prepared)) == ("", ["npu-4"])
    assert spec_path(node, blocked.uid).name in refused.error  # its own error, naming the path
    assert unprepared.error == ""  # nothing of ours is there to remove
    assert left == planted  # nothing foreign was removed or replaced
    assert [str(p) for p in planted if str(p) not in log] == []  # each reported by its path


def plant_foreign_entries(node: FaultNode, prepared: WireClaim) -> list[Path]:
    """Directories, a FIFO and a link under names our clean-ups consider, the directories old
    enough for the stale-temp-file sweep."""
    cdi, data = node.host.cdi, node.data_dir
    victim = node.host.root / "victim"
    victim.write_bytes(b"not ours\n")
    directories = [
        cdi / "spec.123456.tmp",  # the Go CDI writer's temp name, which other drivers use
        cdi / f".{SPEC_PREFIX}{uuid.uuid4()}.json.1.tmp",  # our own temp name
        cdi / f"{SPEC_PREFIX}{uuid.uuid4()}.json",  # a spec name the checkpoint does not hold
        spec_path(node, prepared.uid),  # the spec name of a checkpointed claim
        data / ".checkpoint.json.abc.tmp",
    ]
    spec_path(node, prepared.uid).unlink()
    for directory in directories:
        directory.mkdir()
    fifo = cdi / f".{SPEC_PREFIX}{uuid.uuid4()}.json.2.tmp"
    os.mkfifo(fifo)
    link = cdi / "spec.654321.tmp"
    link.symlink_to(victim)
    old = time.time() - 3600
    for path in (*directories, fifo, link):
        os.utime(path, (old, old), follow_symlinks=False)
    return [*directories, fifo, link]


def test_a_link_at_the_journal_path_is_never_written_through(access: ControlPlane) -> None:
    with fault_node(access, "journal") as node:
        claims = create_claims(node, [[f"npu-{i}"] for i in range(4)])
        victim = node.host.root / "victim"
        victim.write_bytes(b"precious\n")
        journal = node.data_dir / "checkpoint.json.journal"
        node.start()
        with node.kubelet() as kubelet:
            kubelet.prepare(claims[:1], timeout=CALL_S)
        journal.unlink()
        journal.symlink_to(victim)  # planted while the plugin is down: read at the start
        restart(node)
        with node.kubelet() as kubelet:
            after_restart = kubelet.prepare(claims[1:2], timeout=CALL_S).claims
            journal.unlink()
            journal.symlink_to(victim)  # planted while it serves: met by the next save
            with_link = kubelet.prepare(claims[2:3], timeout=CALL_S).claims
            journal.unlink()
            os.link(victim, journal)  # a second name for the victim: appending would reach it
            with_hard_link = kubelet.prepare(claims[3:4], timeout=CALL_S).claims
        assert node.plugin is not None
        node.plugin.kill()
        saved = FileCheckpointStore(node.checkpoint).load()
        journal_is_ours = journal.is_file() and not journal.is_symlink()
        links = journal.stat().st_nlink
        victim_after = victim.read_bytes()

    assert victim_after == b"precious\n"
    assert all(a.error == "" for a in (*after_restart.values(), *with_link.values()))
    assert all(a.error == "" for a in with_hard_link.values())
    assert set(saved.claims) == {c.uid for c in claims}
    assert journal_is_ours
    assert links == 1
