"""What only the file CheckpointStore promises: damage is reported, and saves are atomic."""

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from npu_dra.adapters.checkpoint import FileCheckpointStore, files
from npu_dra.adapters.checkpoint.codec import checksum
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import StateError
from npu_dra.domain.ids import ClaimName, ClaimUID, DeviceName, Namespace, PoolName, RequestName


def claim(uid: str) -> PreparedClaim:
    devices = (
        PreparedDevice((RequestName("r"),), PoolName("node-1"), DeviceName("npu-0"), ("k/c=x",)),
    )
    return PreparedClaim(ClaimRef(Namespace("ns"), ClaimName("c"), ClaimUID(uid)), devices)


OLD = Checkpoint().with_claim(claim("uid-1"))
NEW = OLD.with_claim(claim("uid-2"))


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "checkpoint.json"


@pytest.fixture
def store(path: Path) -> FileCheckpointStore:
    store = FileCheckpointStore(path)
    store.save(checkpoint=OLD)
    return store


Edit = Callable[[dict[str, Any]], object]


def rewrite(path: Path, edit: Edit, *, resign: bool = False) -> None:
    document = json.loads(path.read_text())
    edit(document)
    if resign:
        document["checksum"] = checksum(document["claims"])
    path.write_text(json.dumps(document))


def test_the_file_carries_its_format_version_and_a_checksum(
    path: Path, store: FileCheckpointStore
) -> None:
    document = json.loads(path.read_text())
    assert document["apiVersion"] == "npu-dra.checkpoint/v2"
    assert document["checksum"].startswith("sha256:")
    assert list(document["claims"]) == ["uid-1"]
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda p: p.write_text("{not json"), "JSONDecodeError|Expecting"),
        (
            lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
            "Expecting|Unterminated",
        ),
        (lambda p: p.write_bytes(b""), "Expecting value"),
        (lambda p: p.write_bytes(b"\xff\xfe\x00"), "codec can't decode"),
        (
            lambda p: rewrite(p, lambda d: d.update(apiVersion="npu-dra.checkpoint/v3")),
            "version 3 was written by a newer npu-dra; this one reads versions 1 to 2",
        ),
        (
            lambda p: rewrite(p, lambda d: d.update(apiVersion="example.com/v1")),
            "unknown apiVersion 'example.com/v1'",
        ),
        (lambda p: rewrite(p, lambda d: d.update(checksum="sha256:0")), "checksum mismatch"),
        (
            lambda p: rewrite(p, lambda d: d["claims"]["uid-1"].update(devices=[])),
            "checksum mismatch",
        ),
        (lambda p: rewrite(p, lambda d: d.pop("checksum")), "not an object of"),
        (lambda p: p.write_text("[]"), "not an object of"),
    ],
    ids=[
        "corrupt",
        "truncated",
        "empty",
        "not-utf8",
        "newer-version",
        "foreign-version",
        "checksum",
        "edited",
        "no-checksum",
        "list",
    ],
)
def test_a_damaged_checkpoint_is_a_state_error_naming_the_file(
    path: Path, store: FileCheckpointStore, damage: Callable[[Path], object], problem: str
) -> None:
    damage(path)
    with pytest.raises(StateError, match=problem) as raised:
        store.load()
    assert str(path) in str(raised.value)


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda c: c["uid-1"]["ref"].update(uid="../../etc"), "claim UID"),
        (lambda c: c.update({"../x": c.pop("uid-1")}), "filed under UID"),
        (lambda c: c["uid-1"]["devices"][0].update(admin_access="false"), "expected bool"),
        (lambda c: c["uid-1"]["devices"][0].update(request_names="ab"), "expected tuple"),
        (lambda c: c["uid-1"]["devices"][0].update(surprise=1), "extra fields"),
        (lambda c: c["uid-1"]["devices"][0].pop("pool"), "required field missing"),
    ],
    ids=["hostile-uid", "hostile-key", "bool-as-string", "string-as-list", "extra", "missing"],
)
def test_a_well_signed_but_invalid_checkpoint_is_a_state_error_naming_the_file(
    path: Path, store: FileCheckpointStore, edit: Edit, problem: str
) -> None:
    rewrite(path, lambda document: edit(document["claims"]), resign=True)
    with pytest.raises(StateError, match=problem) as raised:
        store.load()
    assert str(path) in str(raised.value)


def test_a_crash_between_temp_write_and_rename_keeps_the_previous_checkpoint(
    path: Path, store: FileCheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*_: object) -> None:
        raise KeyboardInterrupt("simulated crash before rename")

    monkeypatch.setattr(files, "COMPACT_AFTER", 0)  # this save folds the journal first
    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", crash)
        with pytest.raises(KeyboardInterrupt):
            store.save(checkpoint=NEW)
    assert FileCheckpointStore(path).load() == OLD
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, store.journal.name]


def test_each_save_after_the_first_appends_one_journal_line(
    path: Path, store: FileCheckpointStore
) -> None:
    store.save(checkpoint=NEW)
    store.save(checkpoint=NEW.without(ClaimUID("uid-1")))
    assert len(store.journal.read_bytes().splitlines()) == 2
    assert list(json.loads(path.read_text())["claims"]) == ["uid-1"]  # the snapshot stays
    assert FileCheckpointStore(path).load() == NEW.without(ClaimUID("uid-1"))


def test_a_save_that_changes_nothing_writes_nothing(store: FileCheckpointStore) -> None:
    store.save(checkpoint=OLD)
    assert store.journal.read_bytes() == b""


@pytest.mark.parametrize(
    "torn", [b'{"put": {"apiVer', b'{"put":1}\n', b"\x00\x00\x00"], ids=["cut", "bad", "zeros"]
)
def test_a_last_journal_line_a_crash_cut_is_ignored_and_cut_before_the_next_save(
    path: Path, store: FileCheckpointStore, torn: bytes
) -> None:
    store.save(checkpoint=NEW)
    with store.journal.open("ab") as journal:
        journal.write(torn)  # a save that never returned: nobody was told about it
    assert FileCheckpointStore(path).load() == NEW
    again = FileCheckpointStore(path)
    again.save(checkpoint=OLD)
    assert FileCheckpointStore(path).load() == OLD


def test_a_damaged_journal_line_before_the_last_is_a_state_error_naming_the_file(
    path: Path, store: FileCheckpointStore
) -> None:
    store.save(checkpoint=NEW)
    store.save(checkpoint=OLD)
    lines = store.journal.read_bytes().splitlines(keepends=True)
    store.journal.write_bytes(lines[0].replace(b"uid-2", b"uid-3") + lines[1])
    with pytest.raises(StateError, match="line 1: checksum mismatch") as raised:
        FileCheckpointStore(path).load()
    assert str(store.journal) in str(raised.value)


def test_the_journal_is_folded_into_the_snapshot_every_so_many_saves(
    path: Path, store: FileCheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "COMPACT_AFTER", 2)
    states = [NEW, OLD, NEW, Checkpoint(), NEW, OLD]
    for state in states:
        store.save(checkpoint=state)
        assert FileCheckpointStore(path).load() == state
    assert len(store.journal.read_bytes().splitlines()) <= 2


def test_a_crash_between_folding_and_emptying_the_journal_loses_nothing(
    path: Path, store: FileCheckpointStore
) -> None:
    store.save(checkpoint=NEW)
    store.save(checkpoint=NEW.without(ClaimUID("uid-1")))
    journal = store.journal.read_bytes()
    path.unlink()
    store.journal.unlink()
    folded = FileCheckpointStore(path)
    folded.save(checkpoint=NEW.without(ClaimUID("uid-1")))  # snapshot of what was saved
    store.journal.write_bytes(journal)  # the journal was not emptied yet
    assert FileCheckpointStore(path).load() == NEW.without(ClaimUID("uid-1"))


def test_a_temp_file_left_by_a_real_crash_does_not_disturb_load_or_save(
    path: Path, store: FileCheckpointStore
) -> None:
    (path.parent / f".{path.name}.abc123.tmp").write_text('{"half": ')
    assert store.load() == OLD
    store.save(checkpoint=NEW)
    assert FileCheckpointStore(path).load() == NEW


def test_the_directory_is_created_on_first_save(tmp_path: Path) -> None:
    store = FileCheckpointStore(tmp_path / "var" / "lib" / "npu-dra" / "checkpoint.json")
    assert store.load() == Checkpoint()
    store.save(checkpoint=NEW)
    assert store.load() == NEW
