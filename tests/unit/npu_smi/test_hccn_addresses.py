"""Device IPs from hccn_tool on nodes probed with npu-smi (adapters/hardware/npu_smi/hccn.py)."""

from pathlib import Path

import pytest

from npu_dra.adapters.hardware.npu_smi.hccn import parse_address
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.domain.ids import NodeName
from tests.support.ascend_host import HCCN_TOOL, device_ip
from tests.support.fake_npu_smi import FakeNpuSmi, load_scenario, make_dev_root, make_sysfs


@pytest.mark.parametrize(
    ("reply", "address"),
    [
        ("ipaddr:192.168.100.101\nnetmask:255.255.255.0\n", "192.168.100.101/24"),
        ("ipaddr:10.1.2.3\n", "10.1.2.3/32"),
        ("", None),
        ("ipaddr:not-an-address\nnetmask:255.255.255.0\n", None),
    ],
)
def test_the_tools_answer_is_an_address_in_cidr_form_or_none(reply: str, address: str) -> None:
    assert parse_address(reply) == address


def probe(root: Path) -> NpuSmiProbe:
    manifest = load_scenario("910B4_8npu")
    make_dev_root(root / "dev", range(manifest["davinci_count"]))
    make_sysfs(root / "sys")
    smi = FakeNpuSmi(root / "npu-smi", manifest)
    return NpuSmiProbe(
        node=NodeName("n"), npu_smi=smi.path, sysfs_root=root / "sys", dev_root=root / "dev",
        ascend_root=root / "Ascend",
    )  # fmt: skip


def test_each_chip_gets_the_address_hccn_tool_tells(tmp_path: Path) -> None:
    tool = tmp_path / "Ascend" / "driver" / "tools" / "hccn_tool"
    tool.parent.mkdir(parents=True)
    tool.write_text(HCCN_TOOL)
    tool.chmod(0o755)
    devices = probe(tmp_path).probe().devices
    assert [d.device_ip for d in devices] == [device_ip(d.physical_id) for d in devices]


def test_without_the_tool_no_chip_has_an_address(tmp_path: Path) -> None:
    assert {d.device_ip for d in probe(tmp_path).probe().devices} == {None}
