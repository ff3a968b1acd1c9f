"""NpuSmiProbe end to end through the fake npu-smi: the devices each recorded host publishes."""

import logging
import time
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi import probe as probe_module
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from npu_dra.domain.device import Health, NodeInventory
from npu_dra.domain.ids import NodeName
from npu_dra.domain.pool import published_device
from npu_dra.domain.quantity import Quantity
from tests.support.fake_npu_smi import (
    FIXTURES,
    INFO,
    MAP,
    TOPO,
    FakeNpuSmi,
    make_dev_root,
    make_sysfs,
)

GI = 2**30


class Host:
    """A fake node: npu-smi answering from a scenario, /dev and /sys stand-ins."""

    def __init__(self, tmp_path: Path, scenario: str, dev_nodes: range | None = None) -> None:
        self.npu_smi = FakeNpuSmi.from_scenario(scenario, tmp_path / "npu-smi")
        nodes = range(self.npu_smi.davinci_count) if dev_nodes is None else dev_nodes
        self.dev = make_dev_root(tmp_path / "dev", nodes)
        self.sys = make_sysfs(tmp_path / "sys")

    def probe(self, timeout: float = 10.0) -> NodeInventory:
        return NpuSmiProbe(
            node=NodeName("node-a"),
            npu_smi=self.npu_smi.path,
            sysfs_root=self.sys,
            dev_root=self.dev,
            timeout=timeout,
        ).probe()


def column(inventory: NodeInventory, attribute: str) -> list[object]:
    return [getattr(device, attribute) for device in inventory.devices]


def test_910b3_host_in_three_concurrent_calls(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B3_8npu")
    inventory = host.probe()
    assert column(inventory, "name") == [f"npu-{n}" for n in range(8)]
    assert column(inventory, "numa_node") == [6, 6, 4, 4, 0, 0, 2, 2]
    assert column(inventory, "topology_group") == ["ring-0"] * 8
    assert column(inventory, "memory_bytes") == [64 * GI] * 8
    assert column(inventory, "aicore_count") == [20] * 8
    assert column(inventory, "pci_bus_id")[:2] == ["0000:C1:00.0", "0000:C2:00.0"]
    assert sorted(host.npu_smi.calls()) == ["info", "info -m", "info -t topo"]


def test_910b4_npu_0_publishes_what_the_seed_resource_slice_shows(tmp_path: Path) -> None:
    published = published_device(Host(tmp_path, "910B4_8npu").probe().devices[0])
    assert published.name == "npu-0"
    seed = {"chipName": "910B4", "numaNode": 6, "physicalId": 0, "topologyGroup": "ring-0"}
    assert {key: published.attributes[key] for key in seed} == seed
    assert published.capacity["memCapacity"] == Quantity.parse("32Gi")


def test_910a_a_plus_x_host_has_two_rings(tmp_path: Path) -> None:
    inventory = Host(tmp_path, "910A_8npu_busy").probe()
    assert column(inventory, "topology_group") == ["ring-0"] * 4 + ["ring-1"] * 4
    assert column(inventory, "numa_node") == [3, 2, 1, 0, 3, 2, 1, 0]


def test_a3_dies_are_named_by_phy_id_and_paired_by_sio(tmp_path: Path) -> None:
    host = Host(tmp_path, "Ascend910-A3_16npu")
    make_sysfs(host.sys, pci_numa={"0000:9D:00.0": 5, "0000:9F:00.0": -1})
    inventory = host.probe()
    assert column(inventory, "name") == [f"npu-{p}" for p in range(16)]
    assert column(inventory, "card_id") == [p // 2 for p in range(16)]
    assert column(inventory, "chip_id") == [p % 2 for p in range(16)]
    assert column(inventory, "topology_group") == [f"ring-{p // 2}" for p in range(16)]
    assert column(inventory, "numa_node")[:3] == [5, None, None]
    assert inventory.devices[11].health is Health.DEGRADED


def test_the_pcie_root_is_where_sysfs_links_the_chip_and_is_published_standard(
    tmp_path: Path,
) -> None:
    """k8s.io/dynamic-resource-allocation deviceattribute: `resource.kubernetes.io/pcieRoot` is
    the `pci<domain>:<bus>` directory `/sys/bus/pci/devices/<bdf>` links under; numaNode too."""
    host = Host(tmp_path, "Ascend910-A3_16npu")
    make_sysfs(host.sys, pci_numa={"0000:9D:00.0": 5})
    (host.sys / "bus" / "pci" / "devices" / "0000:9f:00.0").mkdir(parents=True)  # not a link
    inventory = host.probe()
    assert column(inventory, "pcie_root")[:3] == ["pci0000:9d", None, None]
    attributes = published_device(inventory.devices[0]).attributes
    assert attributes["resource.kubernetes.io/pcieRoot"] == "pci0000:9d"
    assert attributes["resource.kubernetes.io/numaNode"] == 5
    assert (
        "resource.kubernetes.io/pcieRoot" not in published_device(inventory.devices[1]).attributes
    )


def test_duo_cards_with_non_contiguous_ids(tmp_path: Path) -> None:
    inventory = Host(tmp_path, "310P3_300IDuo_3cards").probe()
    assert column(inventory, "name") == [f"npu-{n}" for n in range(6)]
    assert column(inventory, "card_id") == [0, 0, 96, 96, 32768, 32768]
    assert column(inventory, "logic_id") == list(range(6))
    assert column(inventory, "topology_group") == [None] * 6
    assert column(inventory, "memory_bytes") == [44280 * 2**20, 43693 * 2**20] * 3
    assert inventory.devices[3].health is Health.UNHEALTHY


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        ("310Pvir01_in-container", (7, "310Pvir01", 0, 2690)),
        ("310B4_Atlas200IDKA2", (0, "310B4", 0, 3513)),
        ("Ascend950_1npu_doc", (0, "xxx", 0, 86016)),
        ("910ProB_1npu_busy", (0, "910ProB", 0, 32768)),
    ],
)
def test_single_chip_hosts(
    tmp_path: Path, scenario: str, expected: tuple[int, str, int, int]
) -> None:
    """expected: NPU id, chip name, logic id, memory MiB."""
    (device,) = Host(tmp_path, scenario).probe().devices
    assert device.name == "npu-0"
    mib = device.memory_bytes // 2**20
    assert (device.card_id, device.chip_name, device.logic_id, mib) == expected


def test_no_card_is_zero_devices(tmp_path: Path) -> None:
    assert Host(tmp_path, "no-card").probe().devices == ()


def test_physical_ids_follow_dev_node_order_by_logic_id(tmp_path: Path) -> None:
    inventory = Host(tmp_path, "310P3_300IDuo_1card_container", dev_nodes=range(4, 6)).probe()
    assert column(inventory, "name") == ["npu-4", "npu-5"]
    assert column(inventory, "logic_id") == [0, 1]
    assert column(inventory, "health") == [Health.HEALTHY] * 2


def test_chip_without_dev_node_is_unhealthy_with_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = Host(tmp_path, "910B4_8npu")
    (host.dev / "davinci5").unlink()
    with caplog.at_level(logging.WARNING):
        inventory = host.probe()
    assert [d.name for d in inventory.devices if d.health is Health.UNHEALTHY] == ["npu-5"]
    assert "/dev/davinci5 is missing" in caplog.text


def test_health_flipped_between_probes_is_seen_by_the_next_probe(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    assert column(host.probe(), "health") == [Health.HEALTHY] * 8
    host.npu_smi.set_health(2, "Critical")
    assert (
        column(host.probe(), "health")
        == [Health.HEALTHY] * 2 + [Health.CRITICAL] + [Health.HEALTHY] * 5
    )


def test_memory_missing_from_info_is_read_per_card(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    info = recorded(FIXTURES / "npu-smi-info_910B4_8npu.txt").replace("/ 32768", "/ 0")
    host.npu_smi.set_answer(INFO, stdout=info)
    memory = str(FIXTURES / "npu-smi-info-t-memory_910B-32G.txt")
    for card in range(8):
        host.npu_smi.set_answer(("info", "-t", "memory", "-i", str(card)), file=memory)
    assert column(host.probe(), "memory_bytes") == [32 * GI] * 8
    assert len(host.npu_smi.calls()) == 3 + 8


def test_memory_nowhere_to_be_found_is_an_error(tmp_path: Path) -> None:
    host = Host(tmp_path, "910ProB_1npu_busy")
    info = recorded(FIXTURES / "npu-smi-info_910ProB_1npu_busy.txt").replace("/ 32768", "/ 0")
    host.npu_smi.set_answer(INFO, stdout=info)
    unsupported = "This device does not support querying memory.\n"
    for query in ("memory", "usages"):
        host.npu_smi.set_answer(("info", "-t", query, "-i", "0"), stdout=unsupported, exit=255)
    with pytest.raises(ProbeError, match="line 7: no memory size in any npu-smi reply"):
        host.probe()


def test_discovery_is_one_concurrent_round(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    host.npu_smi.set_delay(0.5)
    started = time.monotonic()
    host.probe()
    assert time.monotonic() - started < 1.5  # three calls in a row take at least 1.5 s


def test_hung_topology_query_fails_the_probe_within_its_timeout(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    host.npu_smi.set_answer(TOPO, delay=60)
    started = time.monotonic()
    with pytest.raises(ProbeError, match=r"^`npu-smi info -t topo`: no answer within 0.5s"):
        host.probe(timeout=0.5)
    assert time.monotonic() - started < 2.5


def test_chip_listed_by_map_but_not_info_names_the_map_line(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    host.npu_smi.set_answer(INFO, truncate=27)  # the table without its last chip (NPU 7)
    with pytest.raises(ProbeError) as raised:
        host.probe()
    message = str(raised.value)
    assert message.startswith("`npu-smi info -m` line 16: chip missing from `npu-smi info`")


def test_topology_without_a_chip_is_an_error(tmp_path: Path) -> None:
    host = Host(tmp_path, "Ascend910-A3_16npu")
    host.npu_smi.set_answer(TOPO, file=str(FIXTURES / "npu-smi-info-t-topo_910B3_8npu.txt"))
    with pytest.raises(ProbeError, match="chip missing from `npu-smi info -t topo`"):
        host.probe()


def test_unreadable_numa_node_file_is_an_error_naming_it(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    make_sysfs(host.sys, pci_numa={"0000:C1:00.0": 0})
    (host.sys / "bus/pci/devices/0000:c1:00.0/numa_node").write_text("zero\n")
    with pytest.raises(ProbeError, match=r"0000:c1:00.0/numa_node: 'zero' is not a NUMA node"):
        host.probe()


def test_map_disagreeing_with_info_is_an_error(tmp_path: Path) -> None:
    host = Host(tmp_path, "Ascend910-A3_16npu")
    mapping = recorded(FIXTURES / "npu-smi-info-m_Ascend910-A3_16npu_synthetic.txt")
    host.npu_smi.set_answer(
        MAP,
        stdout=mapping.replace(
            "0                              Ascend910",
            "99                             Ascend910",
            1,
        ),
    )
    with pytest.raises(ProbeError, match=r"`npu-smi info -m` line 2: .*Phy-ID"):
        host.probe()


def kept_probe(host: Host, full_every_s: float = 300.0) -> NpuSmiProbe:
    """One probe re-probing over time, as the plugin's health loop uses it."""
    return NpuSmiProbe(
        node=NodeName("node-a"),
        npu_smi=host.npu_smi.path,
        sysfs_root=host.sys,
        dev_root=host.dev,
        full_every_s=full_every_s,
    )


def test_a_re_probe_of_unchanged_hardware_runs_npu_smi_info_alone(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    probe = kept_probe(host)
    first = probe.probe()
    assert probe.probe() is first
    assert sorted(host.npu_smi.calls()) == ["info", "info", "info -m", "info -t topo"]


def test_a_re_probe_reading_the_same_text_does_not_parse_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = Host(tmp_path, "910B4_8npu")
    probe = kept_probe(host)
    first = probe.probe()

    def no_parsing(text: str) -> None:
        raise AssertionError("parsed an unchanged `npu-smi info`")

    monkeypatch.setattr(probe_module, "parse_info", no_parsing)
    assert probe.probe() is first
    host.npu_smi.set_health(2, "Critical")
    with pytest.raises(AssertionError, match="parsed"):  # a changed text is parsed
        probe.probe()


def test_a_health_change_is_seen_by_the_next_cheap_re_probe(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    probe = kept_probe(host)
    probe.probe()
    host.npu_smi.set_health(2, "Critical")
    assert column(probe.probe(), "health")[2] is Health.CRITICAL
    assert host.npu_smi.calls().count("info -t topo") == 2  # the change: a full discovery


def test_a_dev_node_gone_is_seen_by_the_next_cheap_re_probe(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    probe = kept_probe(host)
    probe.probe()
    (host.dev / "davinci5").unlink()
    assert column(probe.probe(), "health")[5] is Health.UNHEALTHY


def test_a_full_discovery_runs_again_once_full_every_s_passed(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    probe = kept_probe(host, full_every_s=0.0)
    probe.probe()
    probe.probe()
    assert host.npu_smi.calls().count("info -t topo") == 2


def test_a_failing_cheap_re_probe_is_the_probe_error(tmp_path: Path) -> None:
    host = Host(tmp_path, "910B4_8npu")
    probe = kept_probe(host)
    probe.probe()
    host.npu_smi.set_answer(INFO, exit=1, stdout="", stderr="dcmi init failed\n")
    with pytest.raises(ProbeError, match="dcmi init failed"):
        probe.probe()


def test_a_chip_name_longer_than_an_attribute_may_be_is_an_error_quoted_short(
    tmp_path: Path,
) -> None:
    """#24: a chip name is published as the `chipName` attribute, which resource.k8s.io/v1
    bounds at 64 characters; a longer one would fail every publish, so the probe refuses it."""
    host = Host(tmp_path, "910B4_8npu")
    long_name = "910B4" + "x" * 5000
    info = recorded(FIXTURES / "npu-smi-info_910B4_8npu.txt").replace("910B4 ", long_name + " ", 1)
    host.npu_smi.set_answer(INFO, stdout=info)
    with pytest.raises(ProbeError, match="chip name longer than 64 characters") as raised:
        host.probe()
    assert len(str(raised.value)) < 400
