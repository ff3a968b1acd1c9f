"""`--shared-chips` on a node: the publisher asks the API server once, at the first publish that
shares one of the node's chips, whether it serves consumable capacity, and publishes the shared
chips in the form the answer allows; a node sharing nothing never asks."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from dependency_injector import providers

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.container import NodeContainer
from npu_dra.app.options import Hardware, defaults
from npu_dra.app.services.chip_sharing.forms import SharingForms
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.device import Health
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import DeviceName, DriverName, NodeName

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
NPU_1 = frozenset({DeviceName("npu-1")})


class CountingSupport:
    """Answers as told (or fails first) and counts the questions."""

    def __init__(self, answer: bool, failures: int = 0) -> None:
        self.answer, self.failures, self.asked = answer, failures, 0

    def serves_consumable_capacity(self, *, node: NodeName, driver: DriverName) -> bool:
        self.asked += 1
        if self.failures:
            self.failures -= 1
            raise ClusterUnavailable("connection refused")
        return self.answer


def publisher(
    cluster: MemoryCluster, mode: SharingForms, count: int = 2
) -> tuple[PoolPublisher, FakeHardware]:
    hardware = FakeHardware({"chip": "910B4", "count": count}, node=NODE)
    inventory = InventoryCache(hardware)
    return PoolPublisher(
        inventory=inventory, cluster=cluster, driver=DRIVER, sharing=mode
    ), hardware


def published(cluster: MemoryCluster) -> dict[str, bool]:
    """Each published device, and whether several claims may hold it."""
    return {d.name: d.allow_multiple_allocations for s in cluster.list_slices() for d in s.devices}


def mode(support: object, chips: frozenset[DeviceName] | None = NPU_1) -> SharingForms:
    return SharingForms(chips=chips, shares=2, support=support, driver=DRIVER)


def test_where_consumable_capacity_is_served_the_chip_is_one_device_and_asked_once() -> None:
    cluster, support = MemoryCluster(), CountingSupport(True)
    pool, _ = publisher(cluster, mode(support))
    pool.publish()
    pool.publish()
    assert published(cluster) == {"npu-0": False, "npu-1": True}
    assert support.asked == 1


def test_where_it_is_not_the_chip_becomes_fixed_shares_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster, support = MemoryCluster(consumable=False), CountingSupport(False)
    pool, _ = publisher(cluster, mode(support))
    with caplog.at_level(logging.WARNING):
        pool.publish()
        pool.publish()
    assert published(cluster) == {"npu-0": False, "npu-1-share-0": False, "npu-1-share-1": False}
    assert support.asked == 1
    assert caplog.text.count("fixed share devices instead") == 1


def test_a_failed_question_decides_nothing_and_is_asked_again_on_the_next_publish() -> None:
    cluster, support = MemoryCluster(), CountingSupport(True, failures=1)
    pool, _ = publisher(cluster, mode(support))
    with pytest.raises(ClusterUnavailable):
        pool.publish()
    assert cluster.list_slices() == ()
    pool.publish()
    assert support.asked == 2
    assert published(cluster)["npu-1"] is True


def test_named_chips_the_node_lacks_are_warned_about_once_and_never_asked_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster, support = MemoryCluster(), CountingSupport(True)
    pool, _ = publisher(cluster, mode(support, frozenset({DeviceName("npu-7")})))
    with caplog.at_level(logging.WARNING):
        pool.publish()
        pool.publish()
    assert published(cluster) == {"npu-0": False, "npu-1": False}
    assert support.asked == 0
    assert caplog.text.count("does not have: npu-7") == 1


def test_an_unhealthy_shared_chip_is_left_out_as_a_chip_is() -> None:
    cluster = MemoryCluster(consumable=False)
    pool, hardware = publisher(cluster, mode(CountingSupport(False), chips=None))
    hardware.set_health(0, Health.UNHEALTHY)
    pool.publish()
    assert sorted(published(cluster)) == ["npu-1-share-0", "npu-1-share-1"]


def node_publishes(tmp_path: Path, support: CountingSupport, **flags: object) -> dict[str, bool]:
    cluster = MemoryCluster()
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
    description = tmp_path / "node.yaml"
    description.write_text("chip: 910B4\ncount: 2\n")
    settings = defaults(
        node_name=NODE,
        driver_name=str(DRIVER),
        hardware=Hardware("fake", description),
        state="memory",
        cdi_root=tmp_path / "cdi",
        plugins_dir=tmp_path / "plugins",
        **flags,
    )
    container = NodeContainer(
        settings=providers.Object(settings),
        cluster=cluster,
        consumable_support=providers.Object(support),
    )
    container.publisher().publish()
    return published(cluster)


def test_the_node_container_publishes_with_the_flags_and_asks_only_when_sharing(
    tmp_path: Path,
) -> None:
    support = CountingSupport(False)
    assert node_publishes(tmp_path, support) == {"npu-0": False, "npu-1": False}
    assert support.asked == 0
    shared = node_publishes(tmp_path, support, shared_chips=None, chip_shares=3)
    assert sorted(shared) == [f"npu-{c}-share-{i}" for c in (0, 1) for i in range(3)]
    assert support.asked == 1
