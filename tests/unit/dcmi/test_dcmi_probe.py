"""DcmiProbe over the stand-in libdcmi.so: the same host through DCMI and through npu-smi
publishes the same slices, and faults injected into the library reach the inventory."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.domain.device import Health
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import desired_slices
from tests.support.dcmi_stub import StubHost, build_library
from tests.support.dcmi_stub import dcmi_probe as stub_probe
from tests.support.fake_npu_smi import scenario_names

NODE = NodeName("node-a")
SCENARIOS = [name for name in scenario_names() if "elided" not in name]


def dcmi_probe(host: StubHost, *, topology: bool = True) -> DcmiProbe:
    if topology:
        return stub_probe(host)
    return DcmiProbe(
        node=NODE,
        host=AscendHostPaths(dev_root=host.directory / "dev"),
        library_path=build_library(),
        sysfs_root=host.directory / "sys",
    )


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_dcmi_and_npu_smi_publish_the_same_slices(scenario: str, tmp_path: Path) -> None:
    host = StubHost.from_scenario(scenario, tmp_path)
    through_dcmi = dcmi_probe(host).probe()
    through_npu_smi = host.npu_smi_probe(NODE).probe()

    def slices(inventory: object) -> object:
        return desired_slices(inventory, driver=DriverName("npu.huawei.com"), generation=1)

    assert slices(through_dcmi) == slices(through_npu_smi)
    assert through_dcmi.devices == through_npu_smi.devices


def test_injected_fault_makes_the_chip_unhealthy_with_its_error_codes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    probe = dcmi_probe(host)
    assert probe.probe().get(DeviceName("npu-3")).health is Health.HEALTHY
    host.set_fault(3, health=2, codes=(0x80E18402, 0x80CB8009))
    with caplog.at_level(logging.WARNING):
        inventory = probe.probe()
        probe.probe()
    assert inventory.get(DeviceName("npu-3")).health is Health.CRITICAL  # SeparateNPU decides
    assert probe.error_codes[DeviceName("npu-3")] == (0x80E18402, 0x80CB8009)
    said = [r.getMessage() for r in caplog.records if "npu-3" in r.getMessage()]
    assert len(said) == 1  # once, not per probe
    assert said[0].startswith("npu-3: DCMI error codes 80E18402 80CB8009: Critical (SeparateNPU")
    host.set_fault(3, health=0)
    assert probe.probe().get(DeviceName("npu-3")).health is Health.HEALTHY
    assert probe.error_codes[DeviceName("npu-3")] == ()


@pytest.mark.parametrize(
    ("codes", "health"),
    [((0xA4025021,), "DEGRADED"), ((0x8C03A000,), "CRITICAL"), ((0x12345678,), "UNHEALTHY")],
)
def test_error_codes_decide_health_through_the_fault_table(
    codes: tuple[int, ...], health: str, tmp_path: Path
) -> None:
    """NotHandleFault -> Degraded, RestartNPU -> Critical; an unknown code keeps DCMI's word."""
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    host.set_fault(4, health=2, codes=codes)
    assert dcmi_probe(host).probe().get(DeviceName("npu-4")).health is Health[health]


@pytest.mark.parametrize(("code", "health"), [(1, "DEGRADED"), (3, "CRITICAL"), (9, "UNKNOWN")])
def test_health_codes_map_onto_domain_health(code: int, health: str, tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    host.set_fault(5, health=code)
    assert dcmi_probe(host).probe().get(DeviceName("npu-5")).health is Health[health]


def test_failed_init_is_a_probe_error_and_retried_next_probe(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    host.set_init_rc(-8005)
    probe = dcmi_probe(host)
    with pytest.raises(ProbeError, match=r"dcmi_init: DCMI error -8005 \(internal error\)"):
        probe.probe()
    host.set_init_rc(0)
    assert len(probe.probe().devices) == 8


def test_error_count_out_of_range_is_an_error_never_a_shorter_list(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    host.set_error_count(500)
    with pytest.raises(ProbeError, match=r"dcmi_get_device_errorcode_v2\(card 0 device 0\)"):
        dcmi_probe(host).probe()


def test_missing_library_names_the_path(tmp_path: Path) -> None:
    probe = DcmiProbe(node=NODE, host=AscendHostPaths(), library_path=tmp_path / "libdcmi.so")
    with pytest.raises(ProbeError, match=f"libdcmi.so could not be loaded.*{tmp_path}"):
        probe.probe()


def test_missing_dev_node_is_unhealthy_as_with_npu_smi(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    (host.directory / "dev" / "davinci2").unlink()
    assert dcmi_probe(host).probe().get(DeviceName("npu-2")).health is Health.UNHEALTHY


def test_without_npu_smi_there_are_no_topology_groups(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    devices = dcmi_probe(host, topology=False).probe().devices
    assert [d.topology_group for d in devices] == [None] * 8
    assert [d.numa_node for d in devices] == [6, 6, 4, 4, 0, 0, 2, 2]  # from DCMI's CPU affinity


def test_library_is_found_through_ld_library_path(tmp_path: Path) -> None:
    host = StubHost.from_scenario("310P3_300IDuo_3cards", tmp_path)
    script = (
        "from pathlib import Path\n"
        "from npu_dra.adapters.hardware.ascend_host import AscendHostPaths\n"
        "from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe\n"
        f"host = AscendHostPaths(dev_root=Path({str(host.directory / 'dev')!r}))\n"
        "print(len(DcmiProbe(node='n', host=host).probe().devices))\n"
    )
    env = {**os.environ, "LD_LIBRARY_PATH": str(build_library().parent)}
    ran = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.stdout.strip() == "6", ran.stderr
