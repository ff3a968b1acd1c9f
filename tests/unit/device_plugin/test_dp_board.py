"""The board wakes ListAndWatch streams for real changes only."""

import threading

from npu_dra.adapters.grpc.device_plugin.board import DeviceBoard
from npu_dra.domain.device import Device, Health
from npu_dra.domain.ids import DeviceName

NPU0 = Device(DeviceName("npu-0"), 0, 0, 0, 0, "910B4", 1)


def test_publishing_the_same_list_is_not_a_change() -> None:
    board = DeviceBoard((NPU0,))
    assert not board.publish((NPU0,))
    assert board.snapshot() == (0, (NPU0,))


def test_a_waiter_gets_the_new_list() -> None:
    board = DeviceBoard((NPU0,))
    unhealthy = (Device(DeviceName("npu-0"), 0, 0, 0, 0, "910B4", 1, health=Health.UNHEALTHY),)
    timer = threading.Timer(0.05, board.publish, args=(unhealthy,))
    timer.start()
    assert board.wait_newer(0, timeout=5.0) == (1, unhealthy)
    timer.join()


def test_waiting_ends_empty_on_timeout_or_wake() -> None:
    board = DeviceBoard((NPU0,))
    assert board.wait_newer(0, timeout=0.01) is None
    timer = threading.Timer(0.05, board.wake)
    timer.start()
    assert board.wait_newer(0, timeout=5.0) is None
    timer.join()
