"""npu-smi's vNPU answers, from recorded captures: templates and a chip's totals and vNPUs."""

import pytest
from support.fake_npu_smi import FIXTURES

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_vnpu import parse_info_vnpu, parse_templates
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from npu_dra.domain.vnpu.instance import Vnpu


def templates(name: str) -> dict[str, dict[str, int]]:
    return {t.name: dict(t.needs) for t in parse_templates(recorded(FIXTURES / name))}


def test_910b4_32g_templates_read_both_lines_of_each() -> None:
    found = templates("npu-smi-info-t-template-info_910B4-32G.txt")
    assert list(found) == ["vir10_3c_16g", "vir10_4c_16g_m", "vir10_3c_16g_nm", "vir05_1c_8g"]
    assert found["vir05_1c_8g"] == {
        "aicore": 5, "memory": 8, "aicpu": 1, "vpc": 2, "venc": 0, "jpegd": 6,
        "pngd": 0, "vdec": 0, "jpege": 1,
    }  # fmt: skip
    assert found["vir10_4c_16g_m"]["jpegd"] == 24
    assert found["vir10_4c_16g_m"]["vdec"] == 2


def test_910b4_64g_templates() -> None:
    found = templates("npu-smi-info-t-template-info_910B4-1-64G.txt")
    assert found["vir05_1c_16g"]["memory"] == 16
    assert found["vir10_3c_32g"]["aicore"] == 10


def test_310p_capture_with_plus_equals_separator() -> None:
    found = templates("npu-smi-info-t-template-info_310P3.txt")
    assert len(found) == 7
    assert found["vir01"] == {
        "aicore": 1, "memory": 3, "aicpu": 1, "vpc": 1, "venc": 0, "jpegd": 2,
        "pngd": 0, "vdec": 1, "jpege": 1,
    }  # fmt: skip


def test_unsupported_answer_means_no_templates() -> None:
    assert parse_templates("This device does not support querying template-info.\n") == ()


def test_a_template_without_its_second_line_is_an_error_naming_the_line() -> None:
    text = recorded(FIXTURES / "npu-smi-info-t-template-info_910B4-1-64G.txt")
    cut = "\n".join(line for line in text.splitlines() if "0              1" not in line)
    with pytest.raises(ProbeError, match="template-info` line"):
        parse_templates(cut)


def test_a_bad_number_names_the_command_and_line() -> None:
    text = recorded(FIXTURES / "npu-smi-info-t-template-info_910B4-32G.txt")
    with pytest.raises(ProbeError, match=r"line 6: 'x5' is not a number"):
        parse_templates(text.replace("vir10_3c_16g        10", "vir10_3c_16g        x5", 1))


def test_info_vnpu_empty_chip_totals() -> None:
    chip = parse_info_vnpu(recorded(FIXTURES / "npu-smi-info-t-info-vnpu_910B4-32G_empty.txt"))
    assert chip.vnpus == ()
    assert chip.totals == {
        "aicore": 20,
        "memory": 32,
        "aicpu": 6,
        "vpc": 9,
        "venc": 0,
        "vdec": 2,
        "jpegd": 24,
        "jpege": 4,
    }  # fmt: skip  (PNGD is NA/NA: left out)


def test_info_vnpu_lists_vnpus_and_their_state() -> None:
    chip = parse_info_vnpu(recorded(FIXTURES / "npu-smi-info-t-info-vnpu_910B4-32G_2vnpus.txt"))
    assert chip.vnpus == (
        Vnpu(100, "vir10_3c_16g", 0, in_use=True),
        Vnpu(101, "vir10_3c_16g", 1, in_use=False),
    )


def test_info_vnpu_64g_without_list_header_when_empty() -> None:
    empty = parse_info_vnpu(recorded(FIXTURES / "npu-smi-info-t-info-vnpu_910B4-1-64G_empty.txt"))
    full = parse_info_vnpu(recorded(FIXTURES / "npu-smi-info-t-info-vnpu_910B4-1-64G_2vnpus.txt"))
    assert empty.vnpus == ()
    assert empty.totals["memory"] == 64
    assert [v.vnpu_id for v in full.vnpus] == [212, 213]


def test_info_vnpu_tail_without_resource_box() -> None:
    chip = parse_info_vnpu(recorded(FIXTURES / "npu-smi-info-t-info-vnpu_310P3_tail.txt"))
    assert chip.totals == {}
    assert [(v.vnpu_id, v.template) for v in chip.vnpus] == [
        (100, "vir01"), (101, "vir02"), (102, "vir04"),
    ]  # fmt: skip
