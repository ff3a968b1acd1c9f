"""A DCMI re-probe within full_every_s of the last full read reads health alone (2 library calls a
chip instead of 11, no sysfs): what else DCMI says changes only with the hardware, the driver or
hccn_tool, and is read again by the next full read, at once where the chips or /dev changed."""

from pathlib import Path

import attrs

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe
from npu_dra.domain.device import Health
from npu_dra.domain.ids import DeviceName, NodeName
from tests.support.dcmi_stub import StubChip, StubHost, build_library

NPU_3 = DeviceName("npu-3")
GIB = 2**30


def probe_of(host: StubHost, *, full_every_s: float = 300.0) -> DcmiProbe:
    return DcmiProbe(
        node=NodeName("node-a"),
        host=AscendHostPaths(dev_root=host.directory / "dev"),
        library_path=build_library(),
        sysfs_root=host.directory / "sys",
        full_every_s=full_every_s,
    )


def with_npu_3_memory(host: StubHost, memory_bytes: int) -> StubHost:
    """The same host, npu-3 now reporting `memory_bytes` (the live host from now on)."""
    chips = [
        StubChip(attrs.evolve(c.device, memory_bytes=memory_bytes), c.health, c.codes)
        if c.device.physical_id == 3
        else c
        for c in host.chips
    ]
    return host.variant("memory", chips=chips)


def test_a_reprobe_reads_health_and_leaves_the_rest_to_the_next_full_read(
    tmp_path: Path,
) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    probe, full_every_time = probe_of(host), probe_of(host, full_every_s=0.0)
    first = probe.probe()
    full_every_time.probe()
    was = first.get(NPU_3).memory_bytes
    changed = with_npu_3_memory(host, was + GIB)
    changed.set_fault(3, health=2, codes=(0x8C03A000,))

    again = probe.probe()
    assert again.get(NPU_3).health is Health.CRITICAL  # health is read on every re-probe
    assert probe.error_codes[NPU_3] == (0x8C03A000,)
    assert again.get(NPU_3).memory_bytes == was  # the rest waits for the full read
    assert attrs.evolve(again.get(NPU_3), health=Health.HEALTHY) == first.get(NPU_3)

    read_in_full = full_every_time.probe()
    assert read_in_full.get(NPU_3).memory_bytes == was + GIB
    assert read_in_full.get(NPU_3).health is Health.CRITICAL


def test_a_reprobe_with_nothing_changed_returns_the_same_inventory(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    probe = probe_of(host)
    first = probe.probe()
    assert probe.probe() is first


def test_a_changed_chip_list_is_read_in_full_at_once(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    probe = probe_of(host)
    assert len(probe.probe().devices) == 8
    host.variant("seven", chips=host.chips[:7])
    assert [d.name for d in probe.probe().devices] == [f"npu-{n}" for n in range(7)]


def test_a_dev_node_gone_is_seen_at_the_next_reprobe(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    probe = probe_of(host)
    assert probe.probe().get(DeviceName("npu-2")).health is Health.HEALTHY
    (host.directory / "dev" / "davinci2").unlink()
    assert probe.probe().get(DeviceName("npu-2")).health is Health.UNHEALTHY


def test_a_fault_gone_is_healthy_again_at_the_next_reprobe(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    probe = probe_of(host)
    probe.probe()
    host.set_fault(3, health=2, codes=(0x8C03A000,))
    assert probe.probe().get(NPU_3).health is Health.CRITICAL
    host.set_fault(3, health=0)
    assert probe.probe().get(NPU_3).health is Health.HEALTHY
    assert probe.error_codes[NPU_3] == ()
