"""Every npu-smi call is timed for /metrics under a label without ids, and only where /metrics is
served (`--metrics-port`)."""

from pathlib import Path

import pytest

from npu_dra.adapters.hardware.npu_smi.runner import NpuSmiRunner, label
from npu_dra.adapters.metrics.memory import MemoryMetrics
from npu_dra.app.options import defaults
from npu_dra.app.wiring.hardware import hardware_probe
from npu_dra.domain.errors import DomainError
from tests.support.fake_npu_smi import FakeNpuSmi, make_dev_root, make_sysfs


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("info",), "npu-smi info"),
        (("info", "-t", "memory", "-i", "3"), "npu-smi info -t memory"),
        (("info", "-t", "usages", "-i", "0", "-c", "1"), "npu-smi info -t usages"),
        (("set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir05_1c_8g", "-v", "100"),
         "npu-smi set -t create-vnpu -f vir05_1c_8g"),
    ],
)  # fmt: skip
def test_labels_leave_ids_out(args: tuple[str, ...], expected: str) -> None:
    assert label(args) == expected


def test_the_runner_reports_each_call_and_its_failure(tmp_path: Path) -> None:
    heard: list[tuple[str, bool]] = []
    runner = NpuSmiRunner(path=tmp_path / "absent", on_done=lambda c, _s, ok: heard.append((c, ok)))
    with pytest.raises(DomainError):
        runner.run(("info", "-t", "topo"), timeout=1.0)
    assert heard == [("npu-smi info -t topo", False)]


def probe_with(tmp_path: Path, metrics_port: int, metrics: MemoryMetrics) -> list[str]:
    npu_smi = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "npu-smi")
    settings = defaults(
        npu_smi_path=npu_smi.path,
        sysfs_root=make_sysfs(tmp_path / "sys"),
        dev_root=make_dev_root(tmp_path / "dev", range(npu_smi.davinci_count)),
        metrics_port=metrics_port,
    )
    asked: list[str] = []

    def provide() -> MemoryMetrics:
        asked.append("metrics")
        return metrics

    hardware_probe(settings, provide).probe()
    return asked


def test_with_a_metrics_port_every_npu_smi_command_is_counted(tmp_path: Path) -> None:
    metrics = MemoryMetrics()
    assert probe_with(tmp_path, 0, metrics) == ["metrics"]
    commands = {command for command, ok in metrics.commands if ok}
    assert {"npu-smi info", "npu-smi info -m", "npu-smi info -t topo"} <= commands


def test_without_one_no_metrics_are_built(tmp_path: Path) -> None:
    metrics = MemoryMetrics()
    assert probe_with(tmp_path, -1, metrics) == []
    assert metrics.commands == []
