"""A fake node description's `errorCodes`: classified as a real chip's codes would be."""

from pathlib import Path

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.domain.device import Health
from npu_dra.domain.ids import NodeName


def probe(tmp_path: Path, text: str) -> list[Health]:
    path = tmp_path / "node.yaml"
    path.write_text(text)
    return [d.health for d in FakeHardware(path, node=NodeName("n")).probe().devices]


def test_codes_give_the_health_their_level_asks(tmp_path: Path) -> None:
    health = probe(
        tmp_path,
        "chip: 910B4\ncount: 3\nhealth: {1: Alarm, 2: Alarm}\n"
        "errorCodes: {1: ['80E18402'], 2: ['81078603']}\n",  # SeparateNPU, NotHandleFault
    )
    assert health == [Health.HEALTHY, Health.CRITICAL, Health.DEGRADED]


def test_the_fault_says_which_level_and_codes_decided(tmp_path: Path) -> None:
    path = tmp_path / "node.yaml"
    path.write_text("chip: 910B4\ncount: 2\nerrorCodes: {1: ['80E18402', 'DEADBEEF']}\n")
    device = FakeHardware(path, node=NodeName("n")).probe().devices[1]
    assert device.fault == "SeparateNPU: 80E18402; unknown code DEADBEEF (hardware says Healthy)"


def test_cleared_codes_are_a_recovery(tmp_path: Path) -> None:
    path = tmp_path / "node.yaml"
    path.write_text("chip: 910B4\ncount: 2\nerrorCodes: {1: ['80E18402']}\n")
    hardware = FakeHardware(path, node=NodeName("n"))
    assert hardware.probe().devices[1].health is Health.CRITICAL
    path.write_text("chip: 910B4\ncount: 2\n")
    assert hardware.probe().devices[1].health is Health.HEALTHY


def test_an_unquoted_code_is_named(tmp_path: Path) -> None:
    with pytest.raises(ProbeError, match=r"node.yaml: errorCodes\[1\] \[81078603\]"):
        probe(tmp_path, "chip: 910B4\ncount: 2\nerrorCodes: {1: [81078603]}\n")
