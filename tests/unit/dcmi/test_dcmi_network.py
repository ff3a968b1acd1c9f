"""DcmiProbe's network facts over the stand-in libdcmi.so (adapters/hardware/dcmi/network.py):
a chip's RoCE address with its prefix and its SuperPoD where DCMI tells them; left out where
the chip does not support the query."""

from pathlib import Path

import attrs

from npu_dra.domain.ids import DeviceName
from tests.support.dcmi_stub import StubHost, dcmi_probe


def test_a_chips_roce_address_and_superpod_reach_the_inventory(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    chip = next(c for c in host.chips if c.device.physical_id == 3)
    chip.device = attrs.evolve(chip.device, device_ip="192.168.100.104/24", super_pod_id=5)
    host.write()
    inventory = dcmi_probe(host).probe()
    three = inventory.get(DeviceName("npu-3"))
    assert three is not None
    assert (three.device_ip, three.super_pod_id) == ("192.168.100.104/24", 5)


def test_a_chip_without_them_has_neither(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    inventory = dcmi_probe(host).probe()
    assert {(d.device_ip, d.super_pod_id) for d in inventory.devices} == {(None, None)}
