"""The health loop publishes fresh lists per family and never drops a device it once listed."""

import threading
from collections.abc import Callable
from typing import Any

from npu_dra.adapters.grpc.device_plugin.board import DeviceBoard
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.device_plugin.health_monitor import HealthMonitor, by_family
from npu_dra.domain.device import Health
from npu_dra.domain.ids import NodeName
from tests.support.controlplane import wait_for


def loop_over(description: dict[str, Any]) -> tuple[FakeHardware, DeviceBoard, HealthMonitor]:
    hardware = FakeHardware(description, node=NodeName("node-a"))
    board = DeviceBoard(by_family(hardware.probe().devices)["Ascend910"])
    return hardware, board, HealthMonitor(hardware, {"Ascend910": board}, interval=5)


def health_of(board: DeviceBoard) -> dict[str, Health]:
    return {d.name: d.health for d in board.devices()}


def test_a_health_change_is_published_once() -> None:
    hardware, board, loop = loop_over({"chip": "910B4", "count": 2})
    hardware.set_health(1, Health.UNHEALTHY)
    loop.tick()
    loop.tick()
    assert board.snapshot()[0] == 1
    assert health_of(board) == {"npu-0": Health.HEALTHY, "npu-1": Health.UNHEALTHY}


def test_a_device_that_vanishes_stays_listed_as_unhealthy() -> None:
    description: dict[str, Any] = {"chip": "910B4", "count": 3}
    _, board, loop = loop_over(description)
    description["count"] = 2  # npu-2 dropped off the bus
    loop.tick()
    assert health_of(board) == {
        "npu-0": Health.HEALTHY,
        "npu-1": Health.HEALTHY,
        "npu-2": Health.UNHEALTHY,
    }
    description["count"] = 3
    loop.tick()
    assert health_of(board)["npu-2"] == Health.HEALTHY


def test_a_failed_probe_keeps_the_last_list() -> None:
    description: dict[str, Any] = {"chip": "910B4", "count": 2}
    _, board, loop = loop_over(description)
    description["count"] = "many"
    loop.tick()
    assert board.snapshot()[0] == 0
    assert set(health_of(board).values()) == {Health.HEALTHY}


def test_devices_are_grouped_by_chip_family() -> None:
    hardware = FakeHardware({"chip": "310P3", "count": 2}, node=NodeName("n"))
    assert list(by_family(hardware.probe().devices)) == ["Ascend310P"]


class Announcing(FakeHardware):
    """Fake chips that announce a health change as it is made, as DCMI's fault events do."""

    def subscribe_faults(self, on_fault: Callable[[], None]) -> bool:
        self.on_fault = on_fault
        return True


def test_an_announced_fault_is_published_without_waiting_for_the_interval() -> None:
    hardware = Announcing({"chip": "910B4", "count": 2}, node=NodeName("node-a"))
    board = DeviceBoard(by_family(hardware.probe().devices)["Ascend910"])
    loop, stop = HealthMonitor(hardware, {"Ascend910": board}, interval=3600), threading.Event()
    runner = threading.Thread(target=loop.run, args=(stop,))
    runner.start()
    try:
        wait_for(lambda: hasattr(hardware, "on_fault"), timeout=10, what="the subscription")
        hardware.set_health(1, Health.CRITICAL)
        hardware.on_fault()
        wait_for(lambda: health_of(board)["npu-1"] is Health.CRITICAL, timeout=10, what="Critical")
    finally:
        stop.set()
        loop.wake()
        runner.join(timeout=10)
    assert not runner.is_alive(), "the loop did not stop when woken"
