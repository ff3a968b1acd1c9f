"""The fake npu-smi: recorded answers by directory or manifest, health flips, broken output."""

import subprocess
import time
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.npu_smi.parse_info import parse_info
from npu_dra.adapters.hardware.npu_smi.replay import main, recorded, write_launcher
from npu_dra.domain.device import Health
from tests.support.fake_npu_smi import FIXTURES, FakeNpuSmi

B4 = FIXTURES / "npu-smi-info_910B4_8npu.txt"
MANIFEST = f"""
commands:
  - args: [info]
    file: {B4}
  - args: [info, -m]
    stdout: "mapped\\n"
    stderr: "careful\\n"
    exit: 3
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_directory_answers_strip_the_source_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "info_-t_topo.txt").write_text("# source: test\nNPU0 X\n")
    monkeypatch.setenv("FAKE_NPU_SMI_DIR", str(tmp_path))
    assert run(capsys, "info", "-t", "topo") == (0, "NPU0 X\n", "")


def test_manifest_answers_with_file_stdout_stderr_and_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "manifest.yaml").write_text(MANIFEST)
    monkeypatch.setenv("FAKE_NPU_SMI_MANIFEST", str(tmp_path / "manifest.yaml"))
    assert run(capsys, "info") == (0, recorded(B4), "")
    assert run(capsys, "info", "-m") == (3, "mapped\n", "careful\n")


def test_unknown_arguments_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_NPU_SMI_DIR", str(tmp_path))
    status, out, err = run(capsys, "info", "-l")
    assert (status, out) == (2, "")
    assert "no recording" in err


def test_health_override_flips_one_card_or_one_chip(tmp_path: Path) -> None:
    fake = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "b4")
    fake.set_health(3, "Alarm")
    health = [c.health for c in parse_info(_call(fake.path, "info")).chips]
    assert health == [Health.HEALTHY] * 3 + [Health.UNHEALTHY] + [Health.HEALTHY] * 4
    duo = FakeNpuSmi.from_scenario("310P3_300IDuo_1card_container", tmp_path / "duo")
    duo.set_health(1792, "Warning", chip=1)
    health = [c.health for c in parse_info(_call(duo.path, "info")).chips]
    assert health == [Health.HEALTHY, Health.DEGRADED]


def test_truncate_garbage_delay_and_call_log(tmp_path: Path) -> None:
    fake = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path)
    fake.set_answer(["info"], truncate=2, garbage="@@@", garbage_after=1)
    fake.set_delay(0.3)
    started = time.monotonic()
    assert _call(fake.path, "info").splitlines() == [
        recorded(B4).splitlines()[0],
        "@@@",
        recorded(B4).splitlines()[1],
    ]
    assert time.monotonic() - started >= 0.3
    assert fake.calls() == ["info"]


def test_launcher_bakes_its_environment(tmp_path: Path) -> None:
    (tmp_path / "info.txt").write_text("hello\n")
    launcher = write_launcher(tmp_path / "npu-smi", env={"FAKE_NPU_SMI_DIR": str(tmp_path)})
    assert _call(launcher, "info") == "hello\n"


def _call(path: Path, *args: str) -> str:
    return subprocess.run([path, *args], capture_output=True, text=True, check=True).stdout
