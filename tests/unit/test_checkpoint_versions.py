"""The checkpoint's versions: what v0.1.0 wrote (version 1) is read and migrated at the first save;
a drained node's checkpoint stays in the form version 1 reads (so it can be downgraded); a
version newer than this one's is refused, naming it."""

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from npu_dra.adapters.checkpoint import FileCheckpointStore
from npu_dra.adapters.checkpoint.codec import checksum, decode, encode
from npu_dra.adapters.instance_lock import InstanceLock
from npu_dra.domain.checkpoint import CHECKPOINT_VERSION, Checkpoint, PreparedClaim, PreparedDevice
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import StateError
from npu_dra.domain.ids import ClaimName, ClaimUID, DeviceName, Namespace, PoolName, RequestName

V1 = "npu-dra.checkpoint/v1"


def v1_claim(uid: str, device: str = "npu-0") -> dict[str, Any]:
    """A claim as v0.1.0 (commit df94798) wrote it: no device identity."""
    return {
        "ref": {"namespace": "ns", "name": f"c-{uid}", "uid": uid},
        "devices": [
            {
                "request_names": ["npu"],
                "pool": "node-1",
                "device": device,
                "cdi_ids": [f"npu.huawei.com/claim={uid}"],
                "admin_access": False,
                "share_id": None,
                "vnpu": None,
            }
        ],
    }


def v1_document(*uids: str) -> dict[str, Any]:
    claims = {uid: v1_claim(uid) for uid in uids}
    return {"apiVersion": V1, "checksum": checksum(claims), "claims": claims}


def claim(uid: str, identity: str | None = "pci:0000:c1:00.0") -> PreparedClaim:
    device = PreparedDevice(
        (RequestName("npu"),),
        PoolName("node-1"),
        DeviceName("npu-0"),
        ("k/c=x",),
        identity=identity,
    )
    return PreparedClaim(ClaimRef(Namespace("ns"), ClaimName("c"), ClaimUID(uid)), (device,))


def snapshot(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text())
    return document


def test_this_version_writes_version_2_with_each_device_identity() -> None:
    assert CHECKPOINT_VERSION == 2
    document = encode(Checkpoint().with_claim(claim("uid-1")))
    assert document["apiVersion"] == "npu-dra.checkpoint/v2"
    [device] = document["claims"]["uid-1"]["devices"]
    assert device["identity"] == "pci:0000:c1:00.0"
    assert decode(document).claims[ClaimUID("uid-1")] == claim("uid-1")


def test_a_version_1_document_reads_with_no_identity_and_says_its_version() -> None:
    read = decode(v1_document("uid-1"))
    [device] = read.claims[ClaimUID("uid-1")].devices
    assert device.identity is None
    assert device.device == "npu-0"
    assert read.version == 1


def test_a_version_1_document_cannot_carry_a_field_version_1_did_not_have() -> None:
    document = v1_document("uid-1")
    document["claims"]["uid-1"]["devices"][0]["identity"] = "pci:0000:c1:00.0"
    document["checksum"] = checksum(document["claims"])
    with pytest.raises(ValueError, match=r"identity.* not in version 1"):
        decode(document)


def test_a_checkpoint_with_no_claims_is_written_in_the_form_version_1_reads() -> None:
    assert encode(Checkpoint())["apiVersion"] == V1


def test_a_newer_version_is_refused_naming_both_versions() -> None:
    document = encode(Checkpoint().with_claim(claim("uid-1")))
    document["apiVersion"] = "npu-dra.checkpoint/v3"
    newer = r"version 3 was written by a newer npu-dra.* versions 1 to 2"
    with pytest.raises(ValueError, match=newer):
        decode(document)


def test_loading_version_1_state_rewrites_nothing(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.json"
    path.write_text(json.dumps(v1_document("uid-1", "uid-2")))
    before = path.read_bytes()
    assert set(FileCheckpointStore(path).load().claims) == {"uid-1", "uid-2"}
    assert path.read_bytes() == before  # an older instance beside this one still reads it


def test_the_first_save_migrates_version_1_state_and_keeps_every_claim(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.json"
    path.write_text(json.dumps(v1_document("uid-1", "uid-2")))
    line = {"put": v1_document("uid-3"), "remove": ["uid-2"]}
    path.with_name("checkpoint.json.journal").write_text(json.dumps(line) + "\n")
    store = FileCheckpointStore(path)
    loaded = store.load()
    assert set(loaded.claims) == {"uid-1", "uid-3"}
    store.save(checkpoint=loaded.with_claim(claim("uid-4")))
    assert snapshot(path)["apiVersion"] == "npu-dra.checkpoint/v2"
    assert set(FileCheckpointStore(path).load().claims) == {"uid-1", "uid-3", "uid-4"}


DRAINED = {"apiVersion": V1, "checksum": checksum({}), "claims": {}}


def drained(path: Path) -> bool:
    journal = path.with_name("checkpoint.json.journal")
    return snapshot(path) == DRAINED and journal.read_bytes() == b""


def wait_drained(path: Path) -> None:
    deadline = time.monotonic() + 10
    while not drained(path):
        assert time.monotonic() < deadline, f"{path} never took the drained form"
        time.sleep(0.01)


def test_files_left_without_claims_take_the_form_version_1_reads(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.json"
    store = FileCheckpointStore(path, drain_after_s=0.2)
    store.save(checkpoint=Checkpoint().with_claim(claim("uid-1")))
    store.save(checkpoint=Checkpoint().with_claim(claim("uid-1")).with_claim(claim("uid-2")))
    store.save(checkpoint=Checkpoint().with_claim(claim("uid-2")))
    store.save(checkpoint=Checkpoint())
    assert not drained(path)  # not at once: a claim coming right back costs no snapshot write
    assert FileCheckpointStore(path).load().claims == {}
    wait_drained(path)
    assert FileCheckpointStore(path).load().claims == {}


def test_a_claim_coming_back_before_the_drain_is_a_journal_line_over_this_versions_snapshot(
    tmp_path: Path,
) -> None:
    path = tmp_path / "checkpoint.json"
    store = FileCheckpointStore(path, drain_after_s=0.2)
    store.save(checkpoint=Checkpoint().with_claim(claim("uid-1")))
    store.save(checkpoint=Checkpoint())
    store.save(checkpoint=Checkpoint().with_claim(claim("uid-2")))
    assert snapshot(path)["apiVersion"] == "npu-dra.checkpoint/v2"
    lines = path.with_name("checkpoint.json.journal").read_bytes().splitlines()
    assert len(lines) == 2
    time.sleep(0.4)  # the drain's timer found a claim held: nothing changed
    assert path.with_name("checkpoint.json.journal").read_bytes().splitlines() == lines
    assert set(FileCheckpointStore(path).load().claims) == {"uid-2"}


def test_a_process_ending_right_after_its_last_unprepare_leaves_the_drained_form(
    tmp_path: Path,
) -> None:
    """An uninstall's plugin exits as soon as its last claim is unprepared; the release
    installed next may be an older one."""
    path = tmp_path / "checkpoint.json"
    script = f"""
from pathlib import Path
from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.domain.checkpoint import Checkpoint
from tests.unit.test_checkpoint_versions import claim
store = FileCheckpointStore(Path({str(path)!r}))
store.save(checkpoint=Checkpoint().with_claim(claim("uid-1")))
store.save(checkpoint=Checkpoint())
"""
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", script], check=True, cwd=root, timeout=60)
    assert drained(path)


def test_files_a_crashed_plugin_left_undrained_are_drained_by_the_plugins_next_load(
    tmp_path: Path,
) -> None:
    path = tmp_path / "checkpoint.json"
    script = f"""
import os
from pathlib import Path
from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.domain.checkpoint import Checkpoint
from tests.unit.test_checkpoint_versions import claim
store = FileCheckpointStore(Path({str(path)!r}))
store.save(checkpoint=Checkpoint().with_claim(claim("uid-1")))
store.save(checkpoint=Checkpoint())
os._exit(0)  # no thread waited for, as after kill -9
"""
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", script], check=True, cwd=root, timeout=60)
    assert not drained(path)
    assert FileCheckpointStore(path, drain_after_s=0.05).load().claims == {}
    time.sleep(0.2)
    assert not drained(path)  # a reader writes nothing
    guard = InstanceLock(tmp_path / "serialize.lock")
    FileCheckpointStore(path, drain_after_s=0.05, drain_guard=guard).load()
    wait_drained(path)  # the plugin's store does, under its instance lock


def test_an_unreadable_newer_journal_line_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.json"
    store = FileCheckpointStore(path)
    store.save(checkpoint=Checkpoint().with_claim(claim("uid-1")))
    journal = path.with_name("checkpoint.json.journal")
    newer = encode(Checkpoint().with_claim(claim("uid-2")))
    newer["apiVersion"] = "npu-dra.checkpoint/v9"
    journal.write_text(json.dumps({"put": newer, "remove": []}) + "\n" + journal.read_text())
    with pytest.raises(StateError, match=rf"{journal}.* version 9 was written by a newer"):
        FileCheckpointStore(path).load()


def test_the_first_claim_on_a_drained_node_is_a_snapshot_an_older_release_refuses(
    tmp_path: Path,
) -> None:
    """v0.1.0 takes a last journal line it cannot read for one a crash cut short and ignores
    it: a claim held after a drain must never be only in the journal."""
    path = tmp_path / "checkpoint.json"
    store = FileCheckpointStore(path, drain_after_s=0.05)
    store.save(checkpoint=Checkpoint().with_claim(claim("uid-1")))
    store.save(checkpoint=Checkpoint())
    wait_drained(path)
    store.save(checkpoint=Checkpoint().with_claim(claim("uid-2")))
    assert snapshot(path)["apiVersion"] == "npu-dra.checkpoint/v2"
    assert list(snapshot(path)["claims"]) == ["uid-2"]
    assert path.with_name("checkpoint.json.journal").read_bytes() == b""


def test_the_drain_reads_a_claim_another_instance_saved_meanwhile_and_keeps_it(
    tmp_path: Path,
) -> None:
    """A seamless upgrade: two instances over one directory, each saving under the lock."""
    path = tmp_path / "checkpoint.json"
    old = FileCheckpointStore(path, drain_after_s=0.2, drain_guard=InstanceLock(tmp_path / "l"))
    new = FileCheckpointStore(path, drain_after_s=3600, drain_guard=InstanceLock(tmp_path / "l"))
    old.save(checkpoint=Checkpoint().with_claim(claim("uid-1")))
    old.save(checkpoint=Checkpoint())  # the old instance's drain is now due in 0.2 s
    new.load()
    new.save(checkpoint=Checkpoint().with_claim(claim("uid-2")))
    time.sleep(0.5)
    assert set(FileCheckpointStore(path).load().claims) == {"uid-2"}
    new.save(checkpoint=Checkpoint())
    new._timer.cancel()  # type: ignore[union-attr]  # no hour-long wait at exit
