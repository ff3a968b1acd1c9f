"""The fake npu-smi's vNPU answers read back as the recorded ones do, and its table changes."""

from pathlib import Path

from support.fake_npu_smi import FIXTURES, FakeNpuSmi, load_scenario

from npu_dra.adapters.hardware.npu_smi.parse_vnpu import parse_info_vnpu, parse_templates
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from npu_dra.adapters.hardware.npu_smi.replay_vnpu import render_info_vnpu, render_templates
from npu_dra.adapters.hardware.npu_smi.runner import NpuSmiRunner
from npu_dra.adapters.hardware.vnpu_presets import vnpu_offer_from


def test_presets_are_the_recorded_templates_and_totals() -> None:
    for preset, suffix in (("910B4", "910B4-32G"), ("910B4-1", "910B4-1-64G")):
        vnpu_offer = vnpu_offer_from(preset)
        text = recorded(FIXTURES / f"npu-smi-info-t-template-info_{suffix}.txt")
        assert vnpu_offer.templates == parse_templates(text)
        empty = recorded(FIXTURES / f"npu-smi-info-t-info-vnpu_{suffix}_empty.txt")
        assert vnpu_offer.totals == parse_info_vnpu(empty).totals


def test_rendered_answers_parse_back() -> None:
    vnpu_offer = vnpu_offer_from("910B4")
    assert parse_templates(render_templates(vnpu_offer)) == vnpu_offer.templates
    text = render_info_vnpu(vnpu_offer, [{"id": 100, "template": "vir10_3c_16g", "vgroup": 0}])
    chip = parse_info_vnpu(text)
    assert chip.totals == vnpu_offer.totals
    assert [(v.vnpu_id, v.template) for v in chip.vnpus] == [(100, "vir10_3c_16g")]
    assert "| 10/20" in text  # free/total after one vir10


def test_create_and_destroy_change_the_table(tmp_path: Path) -> None:
    fake = FakeNpuSmi(tmp_path, {**load_scenario("910B4_8npu"), "vnpu": "910B4"})
    runner = NpuSmiRunner(path=fake.path)
    created = runner.run(
        ("set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir05_1c_8g", "-v", "100"),
        timeout=30,
    )
    assert "Create vnpu success" in created
    listed = parse_info_vnpu(
        runner.run(("info", "-t", "info-vnpu", "-i", "0", "-c", "0"), timeout=30)
    )
    assert [v.vnpu_id for v in listed.vnpus] == [100]
    runner.run(("set", "-t", "destroy-vnpu", "-i", "0", "-c", "0", "-v", "100"), timeout=30)
    listed = parse_info_vnpu(
        runner.run(("info", "-t", "info-vnpu", "-i", "0", "-c", "0"), timeout=30)
    )
    assert listed.vnpus == ()
