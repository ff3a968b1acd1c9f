"""vNPUs go through DCMI where the chips are probed through it and the library has the calls:
one library call per create and per destroy, and the same table npu-smi would list."""

import logging
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.dcmi.vnpu import DcmiVnpuTable
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.adapters.hardware.vnpu_probe import vnpu_table_for
from npu_dra.domain.ids import NodeName
from npu_dra.domain.vnpu.instance import id_range
from tests.support.dcmi_stub import StubHost, dcmi_probe
from tests.support.dcmi_stub_vnpu import vnpu_offer_from, vnpus_file
from tests.support.fake_npu_smi import FakeNpuSmi, load_scenario

PRESET = "910B4"


def host_with_vnpus(tmp_path: Path) -> tuple[StubHost, FakeNpuSmi]:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    host.vnpu = vnpu_offer_from(PRESET)
    host.write()
    npu_smi = FakeNpuSmi(tmp_path / "templates", {**load_scenario("910B4_8npu"), "vnpu": PRESET})
    return host, npu_smi


def test_a_dcmi_probe_gets_the_dcmi_table_and_npu_smi_only_reads_templates(
    tmp_path: Path,
) -> None:
    host, npu_smi = host_with_vnpus(tmp_path)
    probe = dcmi_probe(host)
    chip = next(d for d in probe.probe().devices if d.physical_id == 2)
    table = vnpu_table_for("templates", "dcmi", probe, npu_smi.path)
    assert isinstance(table, DcmiVnpuTable)
    offer = table.vnpu_offer(device=chip)
    assert offer is not None
    template, ids = offer.templates[0].name, id_range(2, chip_name=chip.chip_name)
    npu_smi_calls = len(npu_smi.calls())
    table.create(device=chip, template=template, vnpu_id=ids[0])
    table.create(device=chip, template=template, vnpu_id=ids[1])
    assert len(npu_smi.calls()) == npu_smi_calls, "a create ran npu-smi"
    assert f"vnpu 2 0 {ids[0]} 0 {template}" in vnpus_file(host.path).read_text()
    listed = table.vnpus(device=chip)
    assert [(v.vnpu_id, v.template, v.vgroup) for v in listed] == [
        (ids[0], template, 0),
        (ids[1], template, 1),
    ]
    table.destroy(device=chip, vnpu_id=ids[0])
    assert [v.vnpu_id for v in table.vnpus(device=chip)] == [ids[1]]


def test_an_npu_smi_probe_keeps_the_npu_smi_table(tmp_path: Path) -> None:
    host, npu_smi = host_with_vnpus(tmp_path)
    table = vnpu_table_for("templates", "auto", host.npu_smi_probe(NodeName("n")), npu_smi.path)
    assert type(table) is NpuSmiVnpuTable


def test_a_library_that_does_not_start_leaves_vnpus_to_npu_smi(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host, npu_smi = host_with_vnpus(tmp_path)
    probe = dcmi_probe(host.variant("broken", init_rc=-8005))
    with caplog.at_level(logging.WARNING):
        table = vnpu_table_for("templates", "dcmi", probe, npu_smi.path)
    assert type(table) is NpuSmiVnpuTable
    assert "vNPUs through npu-smi: DCMI did not start" in caplog.text
