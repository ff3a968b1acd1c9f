"""The facts a prepared device's status entry and metadata file carry (domain/device_facts.py)."""

import json

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.domain.checkpoint import PreparedClaim, PreparedDevice
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.device_facts import claim_facts, interface_address
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.vnpu.instance import VnpuRecord

DRIVER = DriverName("npu.huawei.com")
REF = ClaimRef(Namespace("team"), ClaimName("job"), ClaimUID("5a1b"))


def chip(n: int, **facts: object) -> Device:
    return Device(
        name=DeviceName(f"npu-{n}"), physical_id=n, logic_id=n, card_id=n, chip_id=0,
        chip_name="910B4", memory_bytes=32 << 30, **facts,  # type: ignore[arg-type]
    )  # fmt: skip


def prepared(device: str, **fields: object) -> PreparedDevice:
    return PreparedDevice(
        request_names=(RequestName("npu"),), pool=PoolName("node-a"), device=DeviceName(device),
        cdi_ids=(f"k8s.npu.huawei.com/npu=5a1b-{device}",), **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def inventory(*devices: Device) -> NodeInventory:
    return NodeInventory(NodeName("node-a"), devices)


def test_a_whole_chip_names_what_the_node_knows_of_it_and_nothing_else() -> None:
    known = chip(3, numa_node=6, pci_bus_id="0000:82:00.0", topology_group="ring-0")
    [facts] = claim_facts(PreparedClaim(REF, (prepared("npu-3"),)), inventory(known), DRIVER)
    assert (facts.driver, facts.pool, facts.device, facts.share_id) == (
        DRIVER, "node-a", "npu-3", None,
    )  # fmt: skip
    assert facts.facts == {
        "physicalId": 3, "chip": "npu-3", "pciBusID": "0000:82:00.0", "numaNode": 6,
        "topologyGroup": "ring-0",
    }  # fmt: skip
    assert facts.ips == ()


def test_the_device_ip_and_superpod_go_where_the_hardware_told_them() -> None:
    known = chip(0, device_ip="192.168.100.101/24", super_pod_id=7)
    [facts] = claim_facts(PreparedClaim(REF, (prepared("npu-0"),)), inventory(known), DRIVER)
    assert facts.facts["deviceIP"] == "192.168.100.101"
    assert facts.facts["superPodId"] == 7
    assert facts.ips == ("192.168.100.101/24",)


def test_each_share_of_a_chip_names_its_share_id_and_what_it_was_given() -> None:
    shares = tuple(
        PreparedDevice(
            request_names=(RequestName("npu"),),
            pool=PoolName("node-a"),
            device=DeviceName("npu-1"),
            share_id=share_id,
            cdi_ids=(f"k8s.npu.huawei.com/npu=5a1b-npu-1-{share_id}-mem8192-aic5",),
        )
        for share_id in ("0b3c9a52-aaaa-4bbb-8ccc-000000000001", "0b3c9a52-aaaa-4bbb-8ccc-2")
    )
    found = claim_facts(PreparedClaim(REF, shares), inventory(chip(1)), DRIVER)
    assert [f.share_id for f in found] == [s.share_id for s in shares]
    assert {(f.facts["shareMemoryMiB"], f.facts["shareAICores"]) for f in found} == {(8192, 5)}


def test_a_vnpu_names_its_id_and_template_and_its_chip() -> None:
    vnpu = VnpuRecord(vnpu_id=103, chip=DeviceName("npu-2"), template="vir10_3c_32g")
    device = prepared("npu-2-vnpu-0", vnpu=vnpu)
    [facts] = claim_facts(PreparedClaim(REF, (device,)), inventory(chip(2)), DRIVER)
    assert facts.device == "npu-2-vnpu-0"
    assert (facts.facts["vnpuId"], facts.facts["vnpuTemplate"]) == (103, "vir10_3c_32g")
    assert (facts.facts["chip"], facts.facts["physicalId"]) == ("npu-2", 2)


def test_a_chip_gone_from_the_node_has_no_entry() -> None:
    claim = PreparedClaim(REF, (prepared("npu-0"), prepared("npu-5")))
    assert [f.device for f in claim_facts(claim, inventory(chip(0)), DRIVER)] == ["npu-0"]


def test_data_is_a_json_object_within_the_servers_limit() -> None:
    [facts] = claim_facts(PreparedClaim(REF, (prepared("npu-0"),)), inventory(chip(0)), DRIVER)
    assert json.loads(facts.data_json()) == dict(facts.facts)
    big = chip(0, topology_group="g" * 11_000)
    [oversized] = claim_facts(PreparedClaim(REF, (prepared("npu-0"),)), inventory(big), DRIVER)
    with pytest.raises(PrepareError, match="over 10240 bytes"):
        oversized.data_json()


@pytest.mark.parametrize(
    ("given", "cidr"),
    [
        ("192.168.1.8/24", "192.168.1.8/24"),
        ("10.0.0.1", "10.0.0.1/32"),
        (" fe80::1/64", "fe80::1/64"),
    ],
)
def test_an_interface_address_is_written_in_cidr_form(given: str, cidr: str) -> None:
    assert interface_address(given) == cidr


def test_a_bad_address_is_named() -> None:
    with pytest.raises(ValueError, match="'not-an-ip' is not an IP address"):
        interface_address("not-an-ip")


def test_a_fake_node_reports_its_device_ips_and_superpod() -> None:
    spec = {"chip": "910B4", "count": 2, "deviceIPs": {1: "10.0.0.2/24"}, "superPodId": 3}
    devices = FakeHardware(spec, node=NodeName("n")).probe().devices
    assert [(d.device_ip, d.super_pod_id) for d in devices] == [(None, 3), ("10.0.0.2/24", 3)]
    with pytest.raises(ProbeError, match="device IP 'x' is not an IP address"):
        FakeHardware({**spec, "deviceIPs": {0: "x"}}, node=NodeName("n")).probe()
