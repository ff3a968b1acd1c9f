"""The vNPU contract over the three tables: fake hardware's in-memory one, npu-smi's (through
the fake npu-smi's live table) and DCMI's (through the stand-in libdcmi.so, templates from the
fake npu-smi), for each recorded preset."""

from pathlib import Path

import pytest
from support.fake_npu_smi import FakeNpuSmi, load_scenario

from npu_dra.adapters.hardware.dcmi.library import load
from npu_dra.adapters.hardware.dcmi.vnpu import DcmiVnpuTable
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.contract.vnpu import VnpuBackend, VnpuContract
from npu_dra.domain.device import Device
from npu_dra.domain.ids import DeviceName, NodeName
from npu_dra.domain.ports import VnpuTable
from tests.support.dcmi_stub import StubHost, build_library
from tests.support.dcmi_stub_vnpu import vnpu_offer_from

PRESETS = {"910B4": 32, "910B4-1": 64}


def chip(name: str, memory_gib: int, physical_id: int = 0) -> Device:
    return Device(
        DeviceName(f"npu-{physical_id}"), physical_id, physical_id, physical_id, 0, name,
        memory_gib * 2**30, aicore_count=20,
    )  # fmt: skip


def fake_table(preset: str) -> VnpuTable:
    hardware = FakeHardware({"chip": preset, "count": 8, "vnpu": preset}, node=NodeName("n"))
    table = hardware.vnpu_table()
    assert table is not None
    return table


def npu_smi_table(preset: str, directory: Path) -> VnpuTable:
    fake = FakeNpuSmi(directory / "npu-smi", {**load_scenario("910B4_8npu"), "vnpu": preset})
    return NpuSmiVnpuTable(npu_smi=fake.path)


def dcmi_table(preset: str, directory: Path) -> VnpuTable:
    host = StubHost.from_scenario("910B4_8npu", directory)
    host.vnpu = vnpu_offer_from(preset)
    host.write()
    offers = npu_smi_table(preset, directory / "templates")
    assert isinstance(offers, NpuSmiVnpuTable)
    return DcmiVnpuTable(dcmi=load(build_library()), offers=offers)


@pytest.fixture(
    params=[(kind, preset) for kind in ("fake", "npu-smi", "dcmi") for preset in PRESETS],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def vnpu_backend(request: pytest.FixtureRequest, tmp_path: Path) -> VnpuBackend:
    kind, preset = request.param
    counter = iter(range(1000))

    def table() -> VnpuTable:
        if kind == "fake":
            return fake_table(preset)
        if kind == "dcmi":
            return dcmi_table(preset, tmp_path / f"t{next(counter)}")
        return npu_smi_table(preset, tmp_path / f"t{next(counter)}")

    return VnpuBackend(f"{kind} {preset}", table, chip(preset, PRESETS[preset], physical_id=3))


class TestVnpuContract(VnpuContract):
    pass
