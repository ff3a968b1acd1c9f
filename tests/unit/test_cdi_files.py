"""What only the file CdiStore promises: CDI file naming, JSON shape, atomicity, shared dirs."""

import json
import os
from pathlib import Path

import pytest

from npu_dra.adapters.cdi import FileCdiStore
from npu_dra.adapters.cdi.codec import InvalidCdiSpec, decode, encode
from npu_dra.domain.cdi import CdiSpec, claim_cdi_spec
from npu_dra.domain.device import Device, HostFile, HostFiles
from npu_dra.domain.errors import StateError
from npu_dra.domain.ids import ClaimUID, DeviceName, DriverName
from npu_dra.domain.profile import ASCEND_NPU

UID = ClaimUID("a1b2c3d4-0000-4000-8000-000000000001")
FILE_NAME = f"k8s.npu.huawei.com-npu_{UID}.json"
SERVER = HostFiles(device_nodes=frozenset({"davinci_manager", "devmm_svm", "hisi_hdc"}))
TEST_NODE = HostFiles(
    "/tmp/node/dev",
    frozenset({"davinci_manager", "devmm_svm", "hisi_hdc"}),
    (
        HostFile("/opt/npu-smi", "/usr/local/bin/npu-smi"),
        HostFile("/opt/Ascend/driver/lib64", "/usr/local/Ascend/driver/lib64"),
    ),
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "run" / "cdi"


@pytest.fixture
def store(root: Path) -> FileCdiStore:
    return FileCdiStore(root, driver="npu.huawei.com", cdi_class="npu")


def claim_spec(uid: ClaimUID = UID, host: HostFiles = SERVER) -> CdiSpec:
    devices = [Device(DeviceName(f"npu-{i}"), i, i, i, 0, "910B4", 64 << 30) for i in (0, 1)]
    return claim_cdi_spec(
        uid, devices, driver=DriverName("npu.huawei.com"), profile=ASCEND_NPU, host=host
    )


def write_claim(store: FileCdiStore, uid: ClaimUID = UID, host: HostFiles = SERVER) -> None:
    store.write(uid=uid, spec=claim_spec(uid, host))


def test_the_spec_file_follows_the_transient_naming_convention(
    store: FileCdiStore, root: Path
) -> None:
    write_claim(store)
    assert [p.name for p in root.iterdir()] == [FILE_NAME]
    assert (root / FILE_NAME).stat().st_mode & 0o777 == 0o644


def test_the_json_has_exactly_the_cdi_0_3_0_shape(store: FileCdiStore, root: Path) -> None:
    write_claim(store)
    assert json.loads((root / FILE_NAME).read_text()) == {
        "cdiVersion": "0.3.0",
        "kind": "k8s.npu.huawei.com/npu",
        "devices": [
            {
                "name": f"{UID}-npu-0",
                "containerEdits": {"deviceNodes": [{"path": "/dev/davinci0"}]},
            },
            {
                "name": f"{UID}-npu-1",
                "containerEdits": {"deviceNodes": [{"path": "/dev/davinci1"}]},
            },
        ],
        "containerEdits": {
            "env": ["ASCEND_VISIBLE_DEVICES=0,1"],
            "deviceNodes": [
                {"path": "/dev/davinci_manager"},
                {"path": "/dev/devmm_svm"},
                {"path": "/dev/hisi_hdc"},
            ],
        },
    }


def test_a_relocated_dev_root_and_driver_files_give_host_paths_mounts_and_cdi_0_5_0(
    store: FileCdiStore, root: Path
) -> None:
    write_claim(store, host=TEST_NODE)
    document = json.loads((root / FILE_NAME).read_text())
    assert document["cdiVersion"] == "0.5.0"
    assert document["devices"][1]["containerEdits"] == {
        "deviceNodes": [{"path": "/dev/davinci1", "hostPath": "/tmp/node/dev/davinci1"}]
    }
    read_only = ["ro", "nosuid", "nodev", "bind"]
    assert document["containerEdits"] == {
        "env": [
            "ASCEND_VISIBLE_DEVICES=0,1",
            "LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/common"
            ":/usr/local/Ascend/driver/lib64/driver",
        ],
        "deviceNodes": [
            {"path": f"/dev/{n}", "hostPath": f"/tmp/node/dev/{n}"}
            for n in ("davinci_manager", "devmm_svm", "hisi_hdc")
        ],
        "mounts": [
            {
                "hostPath": "/opt/Ascend/driver/lib64",
                "containerPath": "/usr/local/Ascend/driver/lib64",
                "options": read_only,
            },
            {
                "hostPath": "/opt/npu-smi",
                "containerPath": "/usr/local/bin/npu-smi",
                "options": read_only,
            },
        ],
    }


@pytest.mark.parametrize("host", [SERVER, TEST_NODE], ids=["dev", "relocated"])
def test_the_codec_round_trips_the_full_content(host: HostFiles) -> None:
    spec = claim_spec(host=host)
    assert decode(json.loads(json.dumps(encode(spec)))) == spec


def test_a_host_path_in_a_spec_declared_0_3_0_is_refused() -> None:
    document = encode(claim_spec(host=TEST_NODE))
    with pytest.raises(InvalidCdiSpec, match=r"older than its content needs \(0.5.0\)"):
        decode({**document, "cdiVersion": "0.3.0"})


def test_an_empty_host_path_is_refused() -> None:
    document = encode(claim_spec())
    document["devices"][0]["containerEdits"]["deviceNodes"][0]["hostPath"] = ""
    with pytest.raises(InvalidCdiSpec, match="empty path or hostPath"):
        decode(document)


def test_writes_leave_no_temp_files_behind(store: FileCdiStore, root: Path) -> None:
    write_claim(store)
    write_claim(store)
    assert [p.name for p in root.iterdir()] == [FILE_NAME]


def test_a_failed_rename_keeps_the_old_spec_and_leaves_no_temp_file(
    store: FileCdiStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_claim(store)
    before = (root / FILE_NAME).read_bytes()

    def crash(*_: object) -> None:
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(StateError, match=rf"{FILE_NAME}: cannot write: simulated"):
        write_claim(store)
    assert [p.name for p in root.iterdir()] == [FILE_NAME]
    assert (root / FILE_NAME).read_bytes() == before


def test_other_vendors_specs_and_temp_files_are_ignored_and_untouched(
    store: FileCdiStore, root: Path
) -> None:
    root.mkdir(parents=True)
    foreign = {
        f"k8s.gpu.example.com-gpu_{UID}.json": b"{}",
        "nvidia.yaml": b"cdiVersion: 0.5.0",
        "spec.12345.tmp": b"half",
        "k8s.npu.huawei.com-npu_..json": b"{}",
        f"k8s.npu.huawei.com-npu_{UID}.yaml": b"{}",
    }
    for name, data in foreign.items():
        (root / name).write_bytes(data)
    write_claim(store)
    store.remove(uid=UID)
    assert store.claim_uids() == frozenset()
    assert {p.name: p.read_bytes() for p in root.iterdir()} == foreign


def test_a_missing_root_lists_nothing_and_is_created_on_write(
    store: FileCdiStore, root: Path
) -> None:
    assert store.claim_uids() == frozenset()
    assert store.read(uid=UID) is None
    store.remove(uid=UID)
    write_claim(store)
    assert store.claim_uids() == {UID}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "JSONDecodeError"),
        (b"\xff\xfe", "UnicodeDecodeError"),
        (b'{"cdiVersion": "0.3.0", "kind": "k8s.npu.huawei.com/npu"}', "lacks"),
        (b'{"cdiVersion": "0.3.0", "kind": "a/b", "devices": []}', "at least one device"),
        (b'{"cdiVersion": "7", "kind": "a/b", "devices": [{"name": "x"}]}', "cdiVersion"),
        (
            b'{"cdiVersion": "0.3.0", "kind": "a/b", "devices": '
            b'[{"name": "x", "containerEdits": {"hooks": []}}]}',
            "unsupported fields",
        ),
        (b"[]", "not an object"),
        (
            b'{"cdiVersion": "0.3.0", "kind": "a/b", "devices": '
            b'[{"name": "0x", "containerEdits": {"env": ["A=1"]}}]}',
            "older than its content needs (0.5.0)",
        ),
    ],
)
def test_a_malformed_spec_of_ours_is_a_state_error_naming_the_file(
    store: FileCdiStore, root: Path, content: bytes, problem: str
) -> None:
    root.mkdir(parents=True)
    (root / FILE_NAME).write_bytes(content)
    with pytest.raises(StateError) as raised:
        store.read(uid=UID)
    assert str(root / FILE_NAME) in str(raised.value)
    assert problem in str(raised.value)
