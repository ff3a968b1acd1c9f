"""The device plugin over the real npu-smi adapter, fed by a fake npu-smi replaying captures."""

from pathlib import Path

import pytest

from tests.support.kubelet_dp import FakeKubelet

fake_npu_smi = pytest.importorskip("support.fake_npu_smi")
probe_module = pytest.importorskip("npu_dra.adapters.hardware.npu_smi.probe")

SOCKET = "npu-dra-ascend910.sock"


def npu_smi_probe(scenario: str, directory: Path) -> tuple[object, object]:
    fake = fake_npu_smi.FakeNpuSmi.from_scenario(scenario, directory / "npu-smi")
    probe = probe_module.NpuSmiProbe(
        node="node-a",
        npu_smi=fake.path,
        sysfs_root=fake_npu_smi.make_sysfs(directory / "sys"),
        dev_root=fake_npu_smi.make_dev_root(directory / "dev", range(fake.davinci_count)),
    )
    return fake, probe


def test_a_chip_npu_smi_reports_critical_is_streamed_unhealthy(
    kubelet: FakeKubelet, start_plugin, short_dir: Path
) -> None:
    fake, probe = npu_smi_probe("910B4_8npu", short_dir)
    start_plugin(probe, health_interval=0.3)
    (registration,) = kubelet.wait_for_registrations(1, timeout=10.0)
    assert registration.request.resource_name == "huawei.com/Ascend910"
    with kubelet.plugin(SOCKET) as plugin:
        stream = plugin.watch()
        first = stream.next_list(timeout=10.0)
        assert len(first) == 8
        assert {health for health, _ in first.values()} == {"Healthy"}
        fake.set_health(3, "Critical")
        listing = stream.wait_for(lambda got: got["npu-3"][0] == "Unhealthy", timeout=10.0)
        assert [n for n, (h, _) in listing.items() if h == "Unhealthy"] == ["npu-3"]
        with pytest.raises(Exception, match="npu-3"):
            plugin.allocate(["npu-3"])


def test_a_910a_server_gets_ring_aware_preferences_from_its_topo_matrix(
    kubelet: FakeKubelet, start_plugin, short_dir: Path
) -> None:
    _, probe = npu_smi_probe("910A_8npu_busy", short_dir)  # chip name redacted as 'xxx'
    start_plugin(probe)
    (registration,) = kubelet.wait_for_registrations(1, timeout=10.0)
    with kubelet.plugin(registration.request.endpoint) as plugin:
        free = [f"npu-{i}" for i in range(1, 8)]
        assert plugin.preferred(free, 4) == ["npu-4", "npu-5", "npu-6", "npu-7"]
