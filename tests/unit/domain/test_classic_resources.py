"""The classic device plugin's resources: one per chip family, names overridable per family."""

from pathlib import Path

import pytest

from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.domain.classic_resources import by_family, resource_names, socket_name
from npu_dra.domain.ids import NodeName
from tests.support.fake_npu_smi import FakeNpuSmi, make_dev_root, make_sysfs

FAMILIES = ["Ascend310P", "Ascend910"]


def test_one_resource_per_family_under_the_profile_prefix() -> None:
    assert resource_names(FAMILIES, override="", prefix="huawei.com") == {
        "Ascend310P": "huawei.com/Ascend310P",
        "Ascend910": "huawei.com/Ascend910",
    }


def test_a_single_override_needs_a_single_family() -> None:
    assert resource_names(["Ascend910"], override="example.com/npu", prefix="huawei.com") == {
        "Ascend910": "example.com/npu"
    }
    with pytest.raises(ValueError, match="FAMILY=NAME"):
        resource_names(FAMILIES, override="example.com/npu", prefix="huawei.com")


def test_per_family_overrides() -> None:
    names = resource_names(FAMILIES, override="Ascend910=example.com/train", prefix="huawei.com")
    assert names == {"Ascend310P": "huawei.com/Ascend310P", "Ascend910": "example.com/train"}


@pytest.mark.parametrize("bad", ["npu", "kubernetes.io/npu", "Example.com/npu", "a.com/"])
def test_names_the_kubelet_would_refuse_are_refused_here(bad: str) -> None:
    with pytest.raises(ValueError, match="extended resource name"):
        resource_names(["Ascend910"], override=bad, prefix="huawei.com")


def test_socket_names_are_per_family() -> None:
    assert socket_name("Ascend310P") == "npu-dra-ascend310p.sock"


@pytest.mark.parametrize(
    ("scenario", "family"),
    [
        ("Ascend910-A3_16npu", "Ascend910"),
        ("910B4_8npu", "Ascend910"),
        ("310P3_300IDuo_3cards", "Ascend310P"),
    ],
)
def test_a_recorded_host_serves_its_familys_resource(
    tmp_path: Path, scenario: str, family: str
) -> None:
    """An A3 node's npu-smi names its chips `Ascend910`, not `910...`: the resource must still
    be huawei.com/Ascend910 (it once became huawei.com/AscendAscend910)."""
    npu_smi = FakeNpuSmi.from_scenario(scenario, tmp_path / "npu-smi")
    inventory = NpuSmiProbe(
        node=NodeName("node-a"),
        npu_smi=npu_smi.path,
        sysfs_root=make_sysfs(tmp_path / "sys"),
        dev_root=make_dev_root(tmp_path / "dev", range(npu_smi.davinci_count)),
    ).probe()
    families = by_family(inventory.devices)
    assert list(families) == [family]
    names = resource_names(families, override="", prefix="huawei.com")
    assert names == {family: f"huawei.com/{family}"}
