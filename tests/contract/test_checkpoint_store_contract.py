"""Every CheckpointStore adapter behaves the same: the file store and its in-memory twin."""

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu_dra.adapters.checkpoint import FileCheckpointStore, MemoryCheckpointStore, files
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import StateError
from npu_dra.domain.ids import ClaimName, ClaimUID, DeviceName, Namespace, PoolName, RequestName
from npu_dra.domain.ports import CheckpointStore

STORES: dict[str, Callable[[Path], CheckpointStore]] = {
    "memory": lambda _: MemoryCheckpointStore(),
    "file": lambda tmp: FileCheckpointStore(tmp / "plugin" / "checkpoint.json"),
}


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> CheckpointStore:
    return STORES[request.param](tmp_path)


def device(
    name: str, *requests: str, admin_access: bool = False, share_id: str | None = None
) -> PreparedDevice:
    return PreparedDevice(
        request_names=tuple(RequestName(r) for r in requests),
        pool=PoolName("node-1"),
        device=DeviceName(name),
        cdi_ids=(f"k8s.npu.huawei.com/npu=claim-{name}",),
        admin_access=admin_access,
        share_id=share_id,
    )


def claim(uid: str, *devices: PreparedDevice) -> PreparedClaim:
    return PreparedClaim(
        ClaimRef(Namespace("team-a"), ClaimName(f"job-{uid}"), ClaimUID(uid)), devices
    )


SEVERAL = (
    Checkpoint()
    .with_claim(claim("uid-1", device("npu-0", "train", "eval"), device("npu-1", "train")))
    .with_claim(claim("uid-2", device("npu-2", "monitor", admin_access=True)))
    .with_claim(claim("uid-3", device("npu-3", "infer", share_id="5e1f-share")))
    .with_claim(claim("uid-4"))
)


def test_a_fresh_store_loads_an_empty_checkpoint(store: CheckpointStore) -> None:
    assert store.load() == Checkpoint()


def test_load_returns_what_was_saved(store: CheckpointStore) -> None:
    store.save(checkpoint=SEVERAL)
    assert store.load() == SEVERAL


def test_save_replaces_the_whole_checkpoint(store: CheckpointStore) -> None:
    store.save(checkpoint=SEVERAL)
    store.save(checkpoint=SEVERAL.without(ClaimUID("uid-1")))
    assert set(store.load().claims) == {"uid-2", "uid-3", "uid-4"}
    store.save(checkpoint=Checkpoint())
    assert store.load() == Checkpoint()


def test_changing_a_loaded_checkpoint_does_not_change_the_store(store: CheckpointStore) -> None:
    store.save(checkpoint=SEVERAL)
    loaded = store.load()
    assert isinstance(loaded.claims, dict)
    loaded.claims.clear()
    assert store.load() == SEVERAL


def test_a_claim_filed_under_another_uid_is_refused(store: CheckpointStore) -> None:
    misfiled = Checkpoint(claims={ClaimUID("uid-9"): claim("uid-1", device("npu-0", "r"))})
    with pytest.raises(ValueError, match="another claim's UID"):
        store.save(checkpoint=misfiled)
    assert store.load() == Checkpoint()


dns_labels = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?\Z")
uids = st.from_regex(r"\A[a-zA-Z0-9]([-a-zA-Z0-9]{0,20}[a-zA-Z0-9])?\Z")
prepared_devices = st.builds(
    PreparedDevice,
    request_names=st.lists(st.text(max_size=12), max_size=3).map(tuple),
    pool=st.text(max_size=12),
    device=st.text(max_size=12),
    cdi_ids=st.lists(st.text(max_size=30), max_size=3).map(tuple),
    admin_access=st.booleans(),
    share_id=st.none() | st.text(max_size=12),
)
prepared_claims = st.builds(
    PreparedClaim,
    ref=st.builds(ClaimRef, dns_labels, dns_labels, uids),
    devices=st.lists(prepared_devices, max_size=3).map(tuple),
)
checkpoints = st.lists(prepared_claims, max_size=4).map(
    lambda claims: Checkpoint(claims={c.ref.uid: c for c in claims})
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(checkpoint=checkpoints)
def test_any_checkpoint_survives_a_round_trip(
    store: CheckpointStore, checkpoint: Checkpoint
) -> None:
    store.save(checkpoint=checkpoint)
    assert store.load() == checkpoint


# Only the file store has names something else can be planted at (its directory is root-only,
# but a link or a second hard link there must still never be written through).


@pytest.fixture
def file_store(tmp_path: Path) -> FileCheckpointStore:
    return FileCheckpointStore(tmp_path / "plugin" / "checkpoint.json")


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    return victim


def plant_link(store: FileCheckpointStore, victim: Path, *, hard: bool = False) -> None:
    store.journal.unlink()
    if hard:
        os.link(victim, store.journal)
    else:
        store.journal.symlink_to(victim)


@pytest.mark.parametrize("hard", [False, True], ids=["symlink", "hard-link"])
def test_a_link_at_the_journal_is_never_written_through(
    file_store: FileCheckpointStore, victim: Path, hard: bool
) -> None:
    file_store.save(checkpoint=SEVERAL)
    plant_link(file_store, victim, hard=hard)  # while it runs: met by the next append
    file_store.save(checkpoint=SEVERAL.without(ClaimUID("uid-1")))
    assert victim.read_bytes() == b"precious\n"
    assert not file_store.journal.is_symlink()
    assert file_store.journal.stat().st_nlink == 1
    expected = SEVERAL.without(ClaimUID("uid-1"))
    assert FileCheckpointStore(file_store.path).load() == expected


def test_a_link_at_the_journal_found_at_start_is_read_as_absent_and_replaced(
    file_store: FileCheckpointStore, victim: Path
) -> None:
    file_store.save(checkpoint=SEVERAL)
    plant_link(file_store, victim)
    restarted = FileCheckpointStore(file_store.path)
    assert restarted.load() == SEVERAL  # the snapshot; the link's target is not read
    restarted.save(checkpoint=Checkpoint())
    assert victim.read_bytes() == b"precious\n"
    assert FileCheckpointStore(file_store.path).load() == Checkpoint()


def test_a_fifo_at_the_snapshot_is_read_as_absent_without_waiting(
    file_store: FileCheckpointStore,
) -> None:
    file_store.path.parent.mkdir()
    os.mkfifo(file_store.path)
    assert file_store.load() == Checkpoint()
    file_store.save(checkpoint=SEVERAL)
    assert file_store.path.is_file()
    assert FileCheckpointStore(file_store.path).load() == SEVERAL


def test_a_snapshot_over_the_limit_is_refused_unread_never_taken_as_empty(
    file_store: FileCheckpointStore,
) -> None:
    file_store.save(checkpoint=SEVERAL)
    os.truncate(file_store.path, files.MAX_CHECKPOINT_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(StateError, match=f"{file_store.path}: .*larger than the"):
        FileCheckpointStore(file_store.path).load()


def test_a_directory_named_like_a_temp_file_is_left_in_place(
    file_store: FileCheckpointStore,
) -> None:
    file_store.save(checkpoint=SEVERAL)
    planted = file_store.path.parent / ".checkpoint.json.abc.tmp"
    planted.mkdir()
    assert file_store.remove_temp_files() == ()
    assert planted.is_dir()


def test_the_journal_is_folded_once_it_holds_so_many_bytes(
    file_store: FileCheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "COMPACT_AFTER_BYTES", 1)
    file_store.save(checkpoint=Checkpoint().with_claim(claim("uid-1")))
    file_store.save(checkpoint=SEVERAL)  # one line: the journal now holds more than a byte
    file_store.save(checkpoint=SEVERAL.without(ClaimUID("uid-1")))  # folded, then appended
    lines = file_store.journal.read_bytes().splitlines()
    assert len(lines) == 1
    assert FileCheckpointStore(file_store.path).load() == SEVERAL.without(ClaimUID("uid-1"))
