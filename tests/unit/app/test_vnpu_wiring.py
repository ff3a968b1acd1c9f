"""`--vnpu=templates` on a node: vNPU devices published where hardware and server allow,
whole chips only (said once in the log) where either does not."""

import logging
from pathlib import Path

import pytest
from dependency_injector import providers

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.container import NodeContainer
from npu_dra.app.options import Hardware, defaults
from npu_dra.app.services.vnpu_layout import VnpuLayoutProbe
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.pool import ResourceSlice

DRIVER = DriverName("npu.huawei.com")
NODE = "vnpu-node"


def published(
    tmp_path: Path, cluster: MemoryCluster, *, mode: str, vnpu: bool = True
) -> tuple[ResourceSlice, ...]:
    description = tmp_path / "node.yaml"
    description.write_text("chip: 910B4-1\ncount: 2\n" + ("vnpu: 910B4-1\n" if vnpu else ""))
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
    settings = defaults(
        node_name=NODE,
        driver_name=str(DRIVER),
        device_profile="npu",
        hardware=Hardware("fake", description),
        state="memory",
        cdi_root=tmp_path / "cdi",
        plugins_dir=tmp_path / "plugins",
        vnpu=mode,
    )
    container = NodeContainer(settings=providers.Object(settings), cluster=cluster)
    container.publisher().publish()
    container.publisher().publish()
    return cluster.list_slices(driver=DRIVER)


def test_templates_publish_a_slice_per_chip_with_its_counters(tmp_path: Path) -> None:
    slices = published(tmp_path, MemoryCluster(), mode="templates")
    assert sorted(s.shared_counters[0].name for s in slices) == ["npu-0-counters", "npu-1-counters"]
    names = {d.name for s in slices for d in s.devices}
    assert {"npu-0", "npu-0-vir05-1c-16g-3", "npu-1-vir10-3c-32g-1"} <= names
    assert len(names) == 2 * (1 + 4 + 2)


def test_a_server_that_drops_counters_gets_whole_chips_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        slices = published(tmp_path, MemoryCluster(partitionable=False), mode="templates")
    assert [d.name for s in slices for d in s.devices] == ["npu-0", "npu-1"]
    assert all(s.shared_counters == () for s in slices)
    warnings = [r.message for r in caplog.records if "drops sharedCounters" in r.message]
    assert len(warnings) == 1


def test_vnpus_are_off_by_default(tmp_path: Path) -> None:
    slices = published(tmp_path, MemoryCluster(), mode="none")
    assert [d.name for s in slices for d in s.devices] == ["npu-0", "npu-1"]


def test_hardware_that_cannot_split_chips_publishes_whole_chips(tmp_path: Path) -> None:
    slices = published(tmp_path, MemoryCluster(), mode="templates", vnpu=False)
    assert [d.name for s in slices for d in s.devices] == ["npu-0", "npu-1"]


def test_a_server_wanting_counters_apart_gets_counter_only_slices(tmp_path: Path) -> None:
    slices = published(tmp_path, MemoryCluster(counters_apart=True), mode="templates")
    counter_only = [s for s in slices if s.shared_counters]
    assert [sorted(c.name for c in s.shared_counters) for s in counter_only] == [
        ["npu-0-counters", "npu-1-counters"]
    ]
    assert counter_only[0].devices == ()
    assert len({d.name for s in slices for d in s.devices}) == 2 * (1 + 4 + 2)


class FlakyServer:
    """An API server that is unreachable for the first `down` questions, then keeps counters."""

    def __init__(self, down: int) -> None:
        self.down = down
        self.asked = 0

    def partitionable_layout(self, *, node: NodeName, driver: DriverName) -> str | None:
        self.asked += 1
        if self.asked <= self.down:
            raise ClusterUnavailable("probing for partitionable devices: connection refused")
        return "same-slice"


def test_an_unreachable_server_means_whole_chips_until_it_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hardware = FakeHardware({"chip": "910B4", "count": 1, "vnpu": "910B4"}, node=NodeName("n"))
    table = hardware.vnpu_table()
    assert table is not None
    server = FlakyServer(down=2)
    probe = VnpuLayoutProbe(hardware, table, cluster=server, node=NodeName("n"), driver=DRIVER)
    with caplog.at_level(logging.WARNING):
        assert probe.probe().vnpu_offers == {}
        assert probe.probe().vnpu_offers == {}
    assert len([r for r in caplog.records if "cannot ask the API server" in r.message]) == 1
    assert set(probe.probe().vnpu_offers) == {"npu-0"}
    probe.probe()
    assert server.asked == 3  # the answer is final
