"""The static CDI spec defines every name Allocate hands out and keeps out of the DRA store."""

import json
from pathlib import Path

from npu_dra.adapters.cdi import FileCdiStore
from npu_dra.adapters.cdi.static_files import FileStaticCdiSpecs
from npu_dra.domain.cdi import CdiSpec, Mount
from npu_dra.domain.device import Device, HostFiles
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.profile import ASCEND_NPU
from npu_dra.domain.static_cdi import static_spec

KIND = "k8s.npu.huawei.com/npu"
DEVICES = tuple(Device(DeviceName(f"npu-{i}"), i, i, i, 0, "910B4", 1) for i in (1, 0))
MOUNTS = (Mount("/usr/local/bin/npu-smi", "/usr/local/bin/npu-smi"),)
SHARED = ("davinci_manager", "devmm_svm", "hisi_hdc")
HOST = HostFiles(device_nodes=frozenset(SHARED))


def write_static_spec(root: Path, spec: CdiSpec) -> Path:
    return Path(FileStaticCdiSpecs(root).write_static(spec=spec))


def test_one_cdi_device_per_npu_with_shared_nodes_and_mounts_once() -> None:
    spec = static_spec(DEVICES, kind=KIND, profile=ASCEND_NPU, mounts=MOUNTS, host=HOST)
    assert [d.name for d in spec.devices] == ["npu-0", "npu-1"]
    assert [n.path for n in spec.devices[1].edits.device_nodes] == ["/dev/davinci1"]
    assert [n.path for n in spec.edits.device_nodes] == [f"/dev/{n}" for n in SHARED]
    assert [(m.host_path, m.container_path) for m in spec.edits.mounts] == [
        ("/usr/local/bin/npu-smi", "/usr/local/bin/npu-smi")
    ]


def test_written_spec_reads_back_and_is_not_taken_for_a_claim(tmp_path: Path) -> None:
    spec = static_spec(DEVICES, kind=KIND, profile=ASCEND_NPU, mounts=MOUNTS, host=HOST)
    path = write_static_spec(tmp_path, spec)
    assert path.name == "k8s.npu.huawei.com-npu.json"
    read = FileStaticCdiSpecs(tmp_path).read_static(kind=KIND)
    assert read is not None
    assert read.devices == spec.devices
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    dra_store = FileCdiStore(tmp_path, driver="npu.huawei.com", cdi_class="npu")
    assert dra_store.claim_uids() == frozenset()
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temp file left


def test_rewriting_replaces_the_spec(tmp_path: Path) -> None:
    write_static_spec(
        tmp_path, static_spec(DEVICES, kind=KIND, profile=ASCEND_NPU, mounts=(), host=HOST)
    )
    path = write_static_spec(
        tmp_path, static_spec(DEVICES[:1], kind=KIND, profile=ASCEND_NPU, mounts=(), host=HOST)
    )
    assert [d["name"] for d in json.loads(path.read_text())["devices"]] == ["npu-1"]


def test_a_relocated_dev_root_gives_host_paths_and_the_version_they_need(tmp_path: Path) -> None:
    host = HostFiles("/tmp/node/dev", frozenset(SHARED))
    spec = static_spec(DEVICES, kind=KIND, profile=ASCEND_NPU, mounts=(), host=host)
    document = json.loads(write_static_spec(tmp_path, spec).read_text())
    assert document["cdiVersion"] == "0.5.0"
    assert document["devices"][0]["containerEdits"]["deviceNodes"] == [
        {"path": "/dev/davinci0", "hostPath": "/tmp/node/dev/davinci0"}
    ]
