"""Every CdiStore adapter behaves the same: the file store and its in-memory twin."""

import json
import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from npu_dra.adapters.cdi import FileCdiStore, MemoryCdiStore
from npu_dra.adapters.cdi.codec import decode, encode
from npu_dra.domain.cdi import CdiDevice, CdiSpec, ContainerEdits, DeviceNode, Mount, claim_cdi_spec
from npu_dra.domain.device import Device, HostFiles
from npu_dra.domain.errors import InvalidName, StateError
from npu_dra.domain.ids import ClaimUID, DeviceName, DriverName
from npu_dra.domain.ports import CdiStore
from npu_dra.domain.profile import ASCEND_NPU

UID = ClaimUID("a1b2c3d4-0000-4000-8000-000000000001")
OTHER = ClaimUID("b0000000-0000-4000-8000-000000000002")
HOSTILE_UIDS = ["../x", "a/b", "", "a" * 300, "..", "x\x00y", "-a"]


def npu(index: int) -> Device:
    return Device(DeviceName(f"npu-{index}"), index, index, index, 0, "910B4", 64 << 30)


def spec_for(uid: ClaimUID, *indexes: int) -> CdiSpec:
    devices = [npu(i) for i in indexes]
    return claim_cdi_spec(
        uid,
        devices,
        driver=DriverName("npu.huawei.com"),
        profile=ASCEND_NPU,
        host=HostFiles(device_nodes=frozenset({"davinci_manager", "devmm_svm", "hisi_hdc"})),
    )


STORES: dict[str, Callable[[Path], CdiStore]] = {
    "memory": lambda _: MemoryCdiStore(),
    "file": lambda tmp: FileCdiStore(tmp / "cdi", driver="npu.huawei.com", cdi_class="npu"),
}


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> CdiStore:
    return STORES[request.param](tmp_path)


def test_read_returns_what_was_written(store: CdiStore) -> None:
    spec = spec_for(UID, 0, 3)
    store.write(uid=UID, spec=spec)
    assert store.read(uid=UID) == spec


def test_round_trip_keeps_mounts_and_empty_options(store: CdiStore) -> None:
    edits = ContainerEdits(
        env=("A=1", "B="),
        device_nodes=(DeviceNode("/dev/davinci0"),),
        mounts=(
            Mount("/usr/local/Ascend/driver", "/usr/local/Ascend/driver"),
            Mount("/a", "/b", ()),
        ),
    )
    spec = CdiSpec("k8s.npu.huawei.com/npu", (CdiDevice("claim-npu-0", edits),), edits)
    store.write(uid=UID, spec=spec)
    assert store.read(uid=UID) == spec


def test_read_of_an_absent_spec_is_none(store: CdiStore) -> None:
    assert store.read(uid=UID) is None


def test_write_replaces_the_previous_spec(store: CdiStore) -> None:
    store.write(uid=UID, spec=spec_for(UID, 0))
    store.write(uid=UID, spec=spec_for(UID, 1, 2))
    assert store.read(uid=UID) == spec_for(UID, 1, 2)
    assert store.claim_uids() == {UID}


def test_remove_is_idempotent(store: CdiStore) -> None:
    store.write(uid=UID, spec=spec_for(UID, 0))
    store.remove(uid=UID)
    store.remove(uid=UID)
    store.remove(uid=OTHER)
    assert store.read(uid=UID) is None
    assert store.claim_uids() == frozenset()


def test_claim_uids_lists_exactly_the_written_claims(store: CdiStore) -> None:
    assert store.claim_uids() == frozenset()
    store.write(uid=UID, spec=spec_for(UID, 0))
    store.write(uid=OTHER, spec=spec_for(OTHER, 1))
    assert store.claim_uids() == {UID, OTHER}
    store.remove(uid=UID)
    assert store.claim_uids() == {OTHER}


def test_a_digit_led_device_name_is_declared_as_cdi_0_5_0(store: CdiStore) -> None:
    digit_uid = ClaimUID("0f000000-0000-4000-8000-000000000003")
    store.write(uid=digit_uid, spec=spec_for(digit_uid, 0))
    read = store.read(uid=digit_uid)
    assert read is not None
    assert read.version == "0.5.0"
    assert read.devices == spec_for(digit_uid, 0).devices


@pytest.mark.parametrize("uid", HOSTILE_UIDS)
def test_hostile_uids_are_rejected_and_nothing_is_written(
    store: CdiStore, uid: str, tmp_path: Path
) -> None:
    with pytest.raises(InvalidName, match="claim UID"):
        store.write(uid=ClaimUID(uid), spec=spec_for(UID, 0))
    with pytest.raises(InvalidName, match="claim UID"):
        store.read(uid=ClaimUID(uid))
    with pytest.raises(InvalidName, match="claim UID"):
        store.remove(uid=ClaimUID(uid))
    assert store.claim_uids() == frozenset()
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize(
    "spec",
    [
        CdiSpec("k8s.npu.huawei.com/npu", ()),
        CdiSpec("k8s.npu.huawei.com/npu", (CdiDevice("a", ContainerEdits()),)),
        CdiSpec("no-class", (CdiDevice("a", ContainerEdits(env=("A=1",))),)),
        CdiSpec("k8s.npu.huawei.com/npu", (CdiDevice("a", ContainerEdits(env=("NOEQUALS",))),)),
        CdiSpec("k8s.npu.huawei.com/npu", (CdiDevice("a/b", ContainerEdits(env=("A=1",))),)),
        CdiSpec("k8s.npu.huawei.com/npu", (CdiDevice("a", ContainerEdits(env=("A=1",))),) * 2),
        CdiSpec(
            "k8s.npu.huawei.com/npu", (CdiDevice("a", ContainerEdits(env=("A=1",))),), version="9"
        ),
    ],
    ids=["no-devices", "empty-edits", "bad-kind", "bad-env", "bad-name", "dup-name", "bad-version"],
)
def test_a_spec_the_runtime_would_refuse_is_not_written(store: CdiStore, spec: CdiSpec) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - each case has its own message
        store.write(uid=UID, spec=spec)
    assert store.claim_uids() == frozenset()


# Only the file store shares its directory with others (other drivers write the CDI directory):
# what they plant at our names is reported and skipped, never read through, waited on or fatal.


@pytest.fixture
def files(tmp_path: Path) -> FileCdiStore:
    return FileCdiStore(tmp_path / "cdi", driver="npu.huawei.com", cdi_class="npu")


def at(tmp_path: Path, uid: ClaimUID) -> Path:
    return tmp_path / "cdi" / f"k8s.npu.huawei.com-npu_{uid}.json"


def test_a_fifo_at_a_spec_is_refused_without_waiting_and_replaced_by_a_write(
    files: FileCdiStore, tmp_path: Path
) -> None:
    (tmp_path / "cdi").mkdir()
    os.mkfifo(at(tmp_path, UID))  # opening it for reading without O_NONBLOCK waits for a writer
    with pytest.raises(StateError, match=f"{at(tmp_path, UID)}: a FIFO"):
        files.read(uid=UID)
    files.write(uid=UID, spec=spec_for(UID, 0))
    assert files.read(uid=UID) == spec_for(UID, 0)


def test_a_file_over_the_limit_is_refused_unread(files: FileCdiStore, tmp_path: Path) -> None:
    files.write(uid=UID, spec=spec_for(UID, 0))
    os.truncate(at(tmp_path, UID), 200 << 20)  # sparse: no disk, 200 MiB to read
    tracemalloc.start()
    try:
        with pytest.raises(StateError, match="larger than the 1048576-byte limit"):
            files.read(uid=UID)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_a_link_at_a_spec_is_never_read_or_written_through(
    files: FileCdiStore, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.json"
    victim.write_text(json.dumps(encode(spec_for(UID, 5))))
    (tmp_path / "cdi").mkdir()
    at(tmp_path, UID).symlink_to(victim)
    with pytest.raises(StateError, match="a symbolic link"):
        files.read(uid=UID)
    files.write(uid=UID, spec=spec_for(UID, 0))
    assert not at(tmp_path, UID).is_symlink()
    assert decode(json.loads(victim.read_text())) == spec_for(UID, 5)


def test_a_directory_at_a_spec_name_is_reported_once_and_left(
    files: FileCdiStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    at(tmp_path, UID).mkdir(parents=True)
    for _ in range(3):
        assert files.claim_uids() == frozenset()
        files.remove(uid=UID)
        with pytest.raises(StateError, match="a directory"):
            files.read(uid=UID)
    assert at(tmp_path, UID).is_dir()
    reports = [r.getMessage() for r in caplog.records if str(at(tmp_path, UID)) in r.getMessage()]
    assert len(reports) == 1, reports


def test_entries_named_like_temp_files_that_are_not_files_are_left_in_place(
    files: FileCdiStore, tmp_path: Path
) -> None:
    cdi = tmp_path / "cdi"
    cdi.mkdir()
    (tmp_path / "victim").write_text("not ours")
    planted = [cdi / "spec.1.tmp", cdi / f".k8s.npu.huawei.com-npu_{UID}.json.2.tmp"]
    for directory in planted:
        directory.mkdir()
    os.mkfifo(cdi / f".k8s.npu.huawei.com-npu_{UID}.json.3.tmp")
    (cdi / "spec.4.tmp").symlink_to(tmp_path / "victim")
    stale = cdi / f".k8s.npu.huawei.com-npu_{UID}.json.5.tmp"
    stale.write_text("{")
    for entry in cdi.iterdir():
        os.utime(entry, (0, 0), follow_symlinks=False)
    assert files.remove_temp_files() == (stale.name,)
    assert sorted(os.listdir(cdi)) == sorted(
        [p.name for p in planted] + [f".k8s.npu.huawei.com-npu_{UID}.json.3.tmp", "spec.4.tmp"]
    )
    assert (tmp_path / "victim").read_text() == "not ours"
