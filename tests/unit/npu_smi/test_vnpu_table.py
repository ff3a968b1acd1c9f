"""NpuSmiVnpuTable over odd npu-smi answers: a template that makes no good devices is left out and
logged once (however often the chips are asked), the other templates are offered; numbers and
labels npu-smi never prints are errors naming the line, not crashes."""

import logging
import re
from pathlib import Path

import pytest
from support.fake_npu_smi import FIXTURES

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_topo import MAX_CPUS, parse_cpu_list, parse_topo
from npu_dra.adapters.hardware.npu_smi.parse_vnpu import read_templates
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.domain.device import Device
from npu_dra.domain.ids import DeviceName

TEMPLATES = recorded(FIXTURES / "npu-smi-info-t-template-info_910B4-32G.txt")
INFO_VNPU = recorded(FIXTURES / "npu-smi-info-t-info-vnpu_910B4-32G_empty.txt")
GOOD = ["vir10_3c_16g", "vir10_4c_16g_m", "vir10_3c_16g_nm", "vir05_1c_8g"]


def with_template(name: str) -> str:
    lines = TEMPLATES.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("|vir05_1c_8g"))
    return "\n".join([*lines, *(x.replace("vir05_1c_8g", name) for x in lines[at : at + 3]), ""])


def chip(index: int) -> Device:
    return Device(
        name=DeviceName(f"npu-{index}"),
        physical_id=index,
        logic_id=index,
        card_id=index,
        chip_id=0,
        chip_name="910B4",
        memory_bytes=32 * 2**30,
    )


def table(tmp_path: Path, templates: str) -> NpuSmiVnpuTable:
    (tmp_path / "templates.txt").write_text(templates)
    (tmp_path / "info-vnpu.txt").write_text(INFO_VNPU)
    path = tmp_path / "npu-smi"
    path.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {tmp_path}/calls\n'
        f'case "$3" in template-info) exec cat {tmp_path}/templates.txt ;; esac\n'
        f"exec cat {tmp_path}/info-vnpu.txt\n"
    )
    path.chmod(0o755)
    return NpuSmiVnpuTable(npu_smi=path)


def test_a_bad_template_is_left_out_and_logged_once_for_all_chips_and_calls(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vnpus = table(tmp_path, with_template("vir05.1c_8g"))
    offers = [vnpus.vnpu_offer(device=chip(i)) for i in range(8) for _ in range(3)]
    assert all(o is not None and [t.name for t in o.templates] == GOOD for o in offers)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith("vNPU offer: template 'vir05.1c_8g': makes no device name")
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls.count("info -t template-info") == 1
    assert len(calls) == 1 + 8  # each chip's info-vnpu once: its offer is kept


def test_a_line_pair_that_makes_no_template_costs_only_that_template() -> None:
    text = re.sub(r"(\|vir99\s+)5", r"\g<1>-5", with_template("vir99"))
    reading = read_templates(text)
    assert [t.name for t in reading.templates] == GOOD
    (problem,) = reading.problems
    assert "line 18: '-5' is not a number" in str(problem)


def test_a_number_of_5000_digits_is_an_error_naming_the_line() -> None:
    text = re.sub(r"(\|vir05_1c_8g\s+)5", r"\g<1>" + "9" * 5000, TEMPLATES)
    (problem,) = read_templates(text).problems
    assert "has more than 18 digits" in str(problem)
    assert len(str(problem)) < 600


def test_a_topology_label_of_5000_digits_is_an_error_not_a_crash() -> None:
    with pytest.raises(ProbeError, match="is not an NPU<n> or Phy-ID<n> label"):
        parse_topo(f"\tNPU0   CPU Affinity\nNPU{'1' * 5000} X 0-1\n")


def test_a_cpu_list_of_more_cpus_than_linux_has_is_no_cpu_list() -> None:
    assert parse_cpu_list(f"0-{MAX_CPUS - 1}") == frozenset(range(MAX_CPUS))
    assert parse_cpu_list(",".join(["0-99999"] * 1000)) is None
