"""A faulted chip's error codes, read from npu-smi and classified into its health and taint."""

import logging
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.npu_smi.error_codes import MAX_CODES, parse_error_codes
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from npu_dra.domain.device import Health, NodeInventory
from npu_dra.domain.device_taints import DeviceTaint, TaintEffect, TaintPolicy
from npu_dra.domain.fault_codes import fault_table
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import desired_slices
from tests.support.fake_npu_smi import FIXTURES, FakeNpuSmi, make_dev_root, make_sysfs

HEALTH_2 = ["info", "-t", "health", "-i", "2", "-c", "0"]
DRIVER = DriverName("npu.huawei.com")


def health_text(codes: str, word: str = "Alarm") -> str:
    return (
        f"\tHealth Status                  : {word}\n"
        f"\tError Code                     : {codes}\n"
        "\tError Information              : NA\n"
    )


def test_the_recorded_alarm_has_three_codes() -> None:
    text = recorded(FIXTURES / "npu-smi-info-t-health_910A_alarm.txt")
    assert parse_error_codes(text).codes == ("A4025021", "8C03A000", "8C084E00")


def test_the_recorded_healthy_chip_has_none() -> None:
    text = recorded(FIXTURES / "npu-smi-info-t-health_910A_ok.txt")
    assert parse_error_codes(text).codes == ()


def test_malformed_and_surplus_codes_are_dropped() -> None:
    more = " ".join(f"{n:08X}" for n in range(1, MAX_CODES + 1))  # one past the bound
    found = parse_error_codes(health_text(f"80e18402 8C03A00 zz 80E18402 {more}"))
    assert found.codes[:2] == ("80E18402", "00000001")  # upper-cased, repeats removed
    assert len(found.codes) == MAX_CODES
    assert found.dropped == ("8C03A00", "zz", f"{MAX_CODES:08X}")


class Node:
    def __init__(self, tmp_path: Path) -> None:
        self.npu_smi = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "npu-smi")
        self.dev = make_dev_root(tmp_path / "dev", range(self.npu_smi.davinci_count))
        self.sys = make_sysfs(tmp_path / "sys")
        self.probe = NpuSmiProbe(
            node=NodeName("node-a"),
            npu_smi=self.npu_smi.path,
            sysfs_root=self.sys,
            dev_root=self.dev,
            full_every_s=0.0,  # every probe a full discovery: no waiting in the test
        )

    def fault(self, word: str, codes: str) -> None:
        self.npu_smi.set_health(2, word)
        self.npu_smi.set_answer(HEALTH_2, stdout=health_text(codes, word))


def taints(inventory: NodeInventory, name: str) -> tuple[DeviceTaint, ...]:
    policy = TaintPolicy().for_driver(DRIVER)
    slices = desired_slices(inventory, driver=DRIVER, generation=1, taints=policy)
    device = next(d for s in slices for d in s.devices if d.name == DeviceName(name))
    return device.taints


def test_a_separate_npu_code_taints_no_execute_and_recovery_clears_it(tmp_path: Path) -> None:
    node = Node(tmp_path)
    node.fault("Alarm", "80E18402")  # SeparateNPU in Huawei's table
    inventory = node.probe.probe()
    assert inventory.devices[2].health is Health.CRITICAL
    assert inventory.devices[2].fault == "SeparateNPU: 80E18402"
    assert taints(inventory, "npu-2") == (
        DeviceTaint("npu.huawei.com/health", "Critical", TaintEffect.NO_EXECUTE),
    )
    node.fault("OK", "NA")
    recovered = node.probe.probe()
    assert recovered.devices[2].health is Health.HEALTHY
    assert recovered.devices[2].fault == ""
    assert taints(recovered, "npu-2") == ()


def test_a_no_handling_code_leaves_an_alarmed_chip_untainted(tmp_path: Path) -> None:
    node = Node(tmp_path)
    node.fault("Alarm", "81078603")  # NotHandleFault (RoCE link down)
    inventory = node.probe.probe()
    assert inventory.devices[2].health is Health.DEGRADED
    assert taints(inventory, "npu-2") == ()


def test_an_override_table_decides(tmp_path: Path) -> None:
    node = Node(tmp_path)
    node.probe = NpuSmiProbe(
        node=NodeName("node-a"),
        npu_smi=node.npu_smi.path,
        sysfs_root=node.sys,
        dev_root=node.dev,
        fault_table=fault_table({"RestartBusinessCodes": ["80E18402"]}, source="test"),
    )
    node.fault("Alarm", "80E18402")
    inventory = node.probe.probe()
    assert inventory.devices[2].health is Health.UNHEALTHY
    assert taints(inventory, "npu-2")[0].effect is TaintEffect.NO_SCHEDULE


def test_a_failed_health_call_keeps_the_word_and_is_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    node = Node(tmp_path)
    node.npu_smi.set_health(2, "Alarm")
    node.npu_smi.set_answer(HEALTH_2, exit=1, stdout="")
    with caplog.at_level(logging.WARNING):
        first, second = node.probe.probe(), node.probe.probe()
    assert first.devices[2].health is Health.UNHEALTHY
    assert second.devices[2].health is Health.UNHEALTHY
    said = [r for r in caplog.records if "error codes unread" in r.getMessage()]
    assert len(said) == 1
    assert node.npu_smi.calls().count(" ".join(HEALTH_2)) == 2


def test_healthy_chips_cost_no_health_call(tmp_path: Path) -> None:
    node = Node(tmp_path)
    node.probe.probe()
    assert not [c for c in node.npu_smi.calls() if "health" in c]


def test_codes_changing_under_the_same_word_are_seen_by_the_cheap_re_probe(
    tmp_path: Path,
) -> None:
    node = Node(tmp_path)
    node.probe = NpuSmiProbe(
        node=NodeName("node-a"), npu_smi=node.npu_smi.path, sysfs_root=node.sys, dev_root=node.dev
    )
    node.fault("Alarm", "81078603")  # NotHandleFault
    assert node.probe.probe().devices[2].health is Health.DEGRADED
    node.fault("Alarm", "81078603 80E18402")  # and now SeparateNPU, the word still Alarm
    assert node.probe.probe().devices[2].health is Health.CRITICAL
    node.fault("Alarm", "NA")  # codes gone, the word left: the word decides again
    assert node.probe.probe().devices[2].health is Health.UNHEALTHY
    assert node.npu_smi.calls().count("info -t topo") == 1  # no full discovery needed


def test_a_chip_without_its_device_node_stays_unhealthy_whatever_its_codes(
    tmp_path: Path,
) -> None:
    node = Node(tmp_path)
    (node.dev / "davinci2").unlink()
    node.fault("Alarm", "81078603")  # NotHandleFault would make it usable
    assert node.probe.probe().devices[2].health is Health.UNHEALTHY
    assert " ".join(HEALTH_2) not in node.npu_smi.calls()


def test_a_malformed_code_is_dropped_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    node = Node(tmp_path)
    node.fault("Alarm", "80E18402 8C03A0")
    with caplog.at_level(logging.WARNING):
        first, second = node.probe.probe(), node.probe.probe()
    assert first.devices[2].health is second.devices[2].health is Health.CRITICAL
    said = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert said == [
        "`npu-smi info -t health -i 2 -c 0`: dropped 8C03A0 "
        f"(not 8 hex digits, or more than {MAX_CODES} codes)"
    ]
