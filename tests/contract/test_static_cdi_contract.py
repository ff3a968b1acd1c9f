"""Every StaticCdiSpecs adapter behaves the same: the spec file in the CDI directory and its
in-memory twin. One spec per kind, replaced whole, read back equal, absent as None.
"""

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from npu_dra.adapters.cdi.memory import MemoryStaticCdiSpecs
from npu_dra.adapters.cdi.static_files import FileStaticCdiSpecs
from npu_dra.domain.cdi import CdiDevice, CdiSpec, ContainerEdits, Mount
from npu_dra.domain.device import Device, HostFiles
from npu_dra.domain.errors import StateError
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.ports import StaticCdiSpecs
from npu_dra.domain.profile import ASCEND_NPU
from npu_dra.domain.static_cdi import static_spec

KIND = "k8s.npu.huawei.com/npu"
OTHER_KIND = "k8s.npu.huawei.com/vnpu"
SHARED = frozenset({"davinci_manager", "devmm_svm", "hisi_hdc"})
MOUNTS = (Mount("/usr/local/bin/npu-smi", "/usr/local/bin/npu-smi"),)


def npu(index: int) -> Device:
    return Device(DeviceName(f"npu-{index}"), index, index, index, 0, "910B4", 64 << 30)


def spec_of(*indexes: int, kind: str = KIND, host: HostFiles | None = None) -> CdiSpec:
    return static_spec(
        [npu(i) for i in indexes],
        kind=kind,
        profile=ASCEND_NPU,
        mounts=MOUNTS,
        host=host or HostFiles(device_nodes=SHARED),
    )


SPECS: dict[str, Callable[[Path], StaticCdiSpecs]] = {
    "memory": lambda _: MemoryStaticCdiSpecs(),
    "file": lambda tmp: FileStaticCdiSpecs(tmp / "cdi"),
}


@pytest.fixture(params=SPECS)
def specs(request: pytest.FixtureRequest, tmp_path: Path) -> StaticCdiSpecs:
    return SPECS[request.param](tmp_path)


def test_read_returns_the_spec_that_was_written(specs: StaticCdiSpecs) -> None:
    spec = spec_of(1, 0, 3)
    specs.write_static(spec=spec)
    assert specs.read_static(kind=KIND) == spec


def test_the_kind_read_back_is_the_one_the_spec_names(specs: StaticCdiSpecs) -> None:
    specs.write_static(spec=spec_of(0, kind=OTHER_KIND))
    read = specs.read_static(kind=OTHER_KIND)
    assert read is not None
    assert read.kind == OTHER_KIND


def test_a_relocated_dev_root_reads_back_with_host_paths_and_their_version(
    specs: StaticCdiSpecs,
) -> None:
    spec = spec_of(0, 1, host=HostFiles("/tmp/node/dev", SHARED))
    specs.write_static(spec=spec)
    read = specs.read_static(kind=KIND)
    assert read is not None
    assert read == spec
    assert read.version == "0.5.0"
    assert read.devices[0].edits.device_nodes[0].host_path == "/tmp/node/dev/davinci0"


def test_a_kind_never_written_reads_none(specs: StaticCdiSpecs) -> None:
    assert specs.read_static(kind=KIND) is None
    specs.write_static(spec=spec_of(0))
    assert specs.read_static(kind=OTHER_KIND) is None


def test_writing_again_replaces_the_whole_spec(specs: StaticCdiSpecs) -> None:
    specs.write_static(spec=spec_of(0, 1, 2))
    specs.write_static(spec=spec_of(5))
    read = specs.read_static(kind=KIND)
    assert read is not None
    assert read == spec_of(5)
    assert [d.name for d in read.devices] == ["npu-5"]


def test_each_kind_has_its_own_spec(specs: StaticCdiSpecs) -> None:
    specs.write_static(spec=spec_of(0))
    specs.write_static(spec=spec_of(1, 2, kind=OTHER_KIND))
    specs.write_static(spec=spec_of(3))
    assert specs.read_static(kind=KIND) == spec_of(3)
    assert specs.read_static(kind=OTHER_KIND) == spec_of(1, 2, kind=OTHER_KIND)


def test_the_place_written_is_one_per_kind(specs: StaticCdiSpecs) -> None:
    first = specs.write_static(spec=spec_of(0))
    again = specs.write_static(spec=spec_of(1))
    other = specs.write_static(spec=spec_of(0, kind=OTHER_KIND))
    assert first
    assert again == first
    assert other not in {"", first}


@pytest.mark.parametrize(
    "spec",
    [
        CdiSpec(KIND, ()),
        CdiSpec(KIND, (CdiDevice("npu-0", ContainerEdits()),)),
        CdiSpec(KIND, (CdiDevice("npu/0", ContainerEdits(env=("A=1",))),)),
        CdiSpec(KIND, (CdiDevice("npu-0", ContainerEdits(env=("A=1",))),), version="9"),
    ],
    ids=["no-devices", "empty-edits", "bad-name", "bad-version"],
)
def test_a_spec_the_runtime_would_refuse_leaves_the_previous_one(
    specs: StaticCdiSpecs, spec: CdiSpec
) -> None:
    specs.write_static(spec=spec_of(0))
    with pytest.raises(ValueError):  # noqa: PT011 - each case has its own message
        specs.write_static(spec=spec)
    assert specs.read_static(kind=KIND) == spec_of(0)


@pytest.mark.parametrize("kind", ["../../etc/npu", "no-class", "a/b/c", "/", ""])
def test_a_kind_that_is_not_vendor_slash_class_is_never_written_and_reads_none(
    specs: StaticCdiSpecs, kind: str
) -> None:
    device = CdiDevice("npu-0", ContainerEdits(env=("A=1",)))
    with pytest.raises(ValueError, match="is not vendor/class"):
        specs.write_static(spec=CdiSpec(kind, (device,)))
    assert specs.read_static(kind=kind) is None


def test_the_file_adapter_refuses_a_fifo_or_a_link_unread_and_replaces_it(
    tmp_path: Path,
) -> None:
    files = FileStaticCdiSpecs(tmp_path / "cdi")
    path = tmp_path / "cdi" / "k8s.npu.huawei.com-npu.json"
    victim = tmp_path / "victim"
    victim.write_text("not ours")
    path.parent.mkdir()
    os.mkfifo(path)  # a blocking open would wait for a writer for good
    with pytest.raises(StateError, match=f"{path}: a FIFO"):
        files.read_static(kind=KIND)
    path.unlink()
    path.symlink_to(victim)
    with pytest.raises(StateError, match=f"{path}: a symbolic link"):
        files.read_static(kind=KIND)
    files.write_static(spec=spec_of(0))
    assert files.read_static(kind=KIND) == spec_of(0)
    assert victim.read_text() == "not ours"
