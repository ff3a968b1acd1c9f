"""The health loop publishes fresh lists per family and never drops a device it once listed."""

from typing import Any

from npu_dra.adapters.grpc.device_plugin.board import DeviceBoard
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.device_plugin.health_monitor import HealthMonitor, by_family
from npu_dra.domain.device import Health
from npu_dra.domain.ids import NodeName


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
