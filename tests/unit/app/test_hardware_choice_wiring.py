"""`--hardware dcmi` and `--hardware auto` as the plugins wire them: libdcmi.so is taken from
`--dcmi-dir` (the host's DCMI directory, which the DaemonSet already mounts for npu-smi), auto
falls back to npu-smi where it does not load, and dcmi under the gpu profile is refused with the
domain's one message."""

import shutil
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.app.options import Hardware, OptionError, Settings, defaults
from npu_dra.app.options.values import hardware
from npu_dra.app.wiring.hardware import hardware_probe
from tests.support.dcmi_stub import StubHost, build_library

SCENARIO = "310P3_300IDuo_3cards"


def node_settings(host: StubHost, kind: str, dcmi_dir: Path) -> Settings:
    return defaults(
        node_name="node-a",
        hardware=Hardware(kind),
        npu_smi_path=host.directory / "npu-smi" / "npu-smi",
        dev_root=host.directory / "dev",
        sysfs_root=host.directory / "sys",
        dcmi_dir=dcmi_dir,
    )


@pytest.mark.parametrize("kind", ["dcmi", "auto"])
def test_the_library_in_the_dcmi_dir_is_the_backend(tmp_path: Path, kind: str) -> None:
    host = StubHost.from_scenario(SCENARIO, tmp_path / "host")
    dcmi_dir = tmp_path / "dcmi"
    dcmi_dir.mkdir()
    shutil.copy(build_library(), dcmi_dir / "libdcmi.so")
    probe = hardware_probe(node_settings(host, kind, dcmi_dir))
    assert isinstance(probe, DcmiProbe)
    expected = host.npu_smi_probe(probe.probe().node).probe()
    assert [d.name for d in probe.probe().devices] == [d.name for d in expected.devices]


def test_auto_without_the_library_is_npu_smi(tmp_path: Path) -> None:
    host = StubHost.from_scenario(SCENARIO, tmp_path / "host")
    probe = hardware_probe(node_settings(host, "auto", tmp_path / "no-dcmi-here"))
    assert isinstance(probe, NpuSmiProbe)
    assert len(probe.probe().devices) == 6


def test_dcmi_under_the_gpu_profile_is_refused_naming_both_flags() -> None:
    with pytest.raises(OptionError) as raised:
        defaults(device_profile="gpu", hardware=Hardware("dcmi"))
    assert str(raised.value) == (
        "--hardware dcmi finds npu devices, not gpu: give --device-profile=npu"
    )


@pytest.mark.parametrize("profile", ["npu", "gpu"])
def test_auto_is_accepted_under_every_profile(profile: str) -> None:
    assert defaults(device_profile=profile, hardware=hardware("auto")).hardware.kind == "auto"
