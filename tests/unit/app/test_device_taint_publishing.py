"""Taint or remove: the publisher asks the API once whether it keeps device taints, taints
unhealthy devices where it does, and falls back to leaving them out (logged once) where not."""

from __future__ import annotations

import logging

import pytest

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.kube_shapes.reader import Fields, ShapeError
from npu_dra.adapters.kube_shapes.slices import device_from_api, device_to_api
from npu_dra.app.services.device_taints import TaintMode
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.device import Health
from npu_dra.domain.device_taints import DeviceTaint, TaintEffect, TaintPolicy
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import PublishedDevice

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
DEFAULTS = TaintPolicy()


class CountingSupport:
    """A DeviceTaintSupport that answers as told (or fails first) and counts the questions."""

    def __init__(self, answer: bool, failures: int = 0) -> None:
        self.answer = answer
        self.failures = failures
        self.asked = 0

    def serves_device_taints(self, *, node: NodeName, driver: DriverName) -> bool:
        self.asked += 1
        if self.failures:
            self.failures -= 1
            raise ClusterUnavailable("connection refused")
        return self.answer


def publisher(
    cluster: MemoryCluster, support: CountingSupport, policy: TaintPolicy | None = DEFAULTS
) -> tuple[PoolPublisher, FakeHardware]:
    hardware = FakeHardware({"chip": "910B4", "count": 3}, node=NODE)
    mode = TaintMode(policy=policy, support=support, driver=DRIVER)
    return (
        PoolPublisher(
            inventory=InventoryCache(hardware), cluster=cluster, driver=DRIVER, taints=mode
        ),
        hardware,
    )


def published(cluster: MemoryCluster) -> dict[str, list[str]]:
    return {
        d.name: [f"{t.value}:{t.effect.value}" for t in d.taints]
        for s in cluster.list_slices(node=NODE)
        for d in s.devices
    }


def test_where_taints_are_served_an_alarm_taints_the_device_and_recovery_removes_it() -> None:
    cluster = MemoryCluster(device_taints=True)
    pool, hardware = publisher(cluster, CountingSupport(True))
    hardware.set_health(1, Health.UNHEALTHY)
    hardware.set_health(2, Health.CRITICAL)
    pool.publish()
    assert published(cluster) == {
        "npu-0": [],
        "npu-1": ["Unhealthy:NoSchedule"],
        "npu-2": ["Critical:NoExecute"],
    }
    hardware.set_health(1, Health.HEALTHY)
    hardware.set_health(2, Health.HEALTHY)
    pool.publish()
    assert published(cluster) == {"npu-0": [], "npu-1": [], "npu-2": []}


def test_where_taints_are_not_served_unhealthy_devices_are_left_out_and_that_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster = MemoryCluster(device_taints=False)
    support = CountingSupport(False)
    pool, hardware = publisher(cluster, support)
    hardware.set_health(1, Health.UNHEALTHY)
    with caplog.at_level(logging.WARNING):
        pool.publish()
        pool.publish()
    assert published(cluster) == {"npu-0": [], "npu-2": []}
    assert support.asked == 1
    assert caplog.text.count("does not keep device taints") == 1


def test_a_failed_question_decides_nothing_and_is_asked_again_on_the_next_publish() -> None:
    cluster = MemoryCluster()
    support = CountingSupport(True, failures=1)
    pool, hardware = publisher(cluster, support)
    hardware.set_health(0, Health.UNHEALTHY)
    with pytest.raises(ClusterUnavailable):
        pool.publish()
    assert cluster.list_slices(node=NODE) == ()
    pool.publish()
    assert support.asked == 2
    assert published(cluster)["npu-0"] == ["Unhealthy:NoSchedule"]


def test_a_healthy_pool_is_published_without_asking_and_the_first_alarm_asks() -> None:
    """No device of a healthy pool carries a taint either way, so a start on healthy hardware
    does not wait for the question (a dry-run create: issue 49)."""
    cluster = MemoryCluster(device_taints=True)
    support = CountingSupport(True)
    pool, hardware = publisher(cluster, support)
    pool.publish()
    assert support.asked == 0
    assert published(cluster) == {"npu-0": [], "npu-1": [], "npu-2": []}
    hardware.set_health(1, Health.UNHEALTHY)
    pool.publish()
    assert support.asked == 1
    assert published(cluster)["npu-1"] == ["Unhealthy:NoSchedule"]


def test_with_device_taints_off_the_api_is_never_asked() -> None:
    cluster = MemoryCluster()
    support = CountingSupport(True)
    pool, hardware = publisher(cluster, support, policy=None)
    hardware.set_health(0, Health.UNHEALTHY)
    pool.publish()
    assert support.asked == 0
    assert "npu-0" not in published(cluster)


def test_taints_round_trip_through_the_api_shape_and_the_servers_time_is_not_ours() -> None:
    taint = DeviceTaint("npu.huawei.com/health", "Alarm", TaintEffect.NO_SCHEDULE)
    body = device_to_api(PublishedDevice(DeviceName("npu-0"), taints=(taint,)))
    assert body["taints"] == [
        {"key": "npu.huawei.com/health", "value": "Alarm", "effect": "NoSchedule"}
    ]
    body["taints"][0]["timeAdded"] = "2026-11-23T02:00:00Z"
    assert device_from_api(Fields(body, obj="slice")).taints == (taint,)


def test_a_stored_taint_effect_this_driver_never_sets_is_an_error_naming_it() -> None:
    body = {"name": "npu-0", "taints": [{"key": "k", "effect": "None"}]}
    with pytest.raises(ShapeError, match="'None' is not one of NoSchedule, NoExecute"):
        device_from_api(Fields(body, obj="slice"))


def test_a_cluster_api_that_cannot_answer_about_taints_means_removal() -> None:
    mode = TaintMode(policy=DEFAULTS, support=object(), driver=DRIVER)
    assert mode.policy(NODE) is None
