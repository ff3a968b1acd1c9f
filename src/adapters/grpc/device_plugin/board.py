"""The current device list of one resource, and a way to wait until it changes.

ListAndWatch streams block here while the health loop publishes; a stream wakes only for a list
that differs from the one it last sent, so the kubelet sees one message per real change.
"""

import threading

from npu_dra.domain.device import Device

Snapshot = tuple[int, tuple[Device, ...]]


class DeviceBoard:
    def __init__(self, devices: tuple[Device, ...] = ()) -> None:
        self._devices = devices
        self._version = 0
        self._changed = threading.Condition()

    def publish(self, devices: tuple[Device, ...]) -> bool:
        """Replace the list; True (and waiters woken) only if it differs from the last one."""
        with self._changed:
            if devices == self._devices:
                return False
            self._devices = devices
            self._version += 1
            self._changed.notify_all()
            return True

    def snapshot(self) -> Snapshot:
        with self._changed:
            return self._version, self._devices

    def devices(self) -> tuple[Device, ...]:
        return self.snapshot()[1]

    def wait_newer(self, version: int, *, timeout: float) -> Snapshot | None:
        """The list once its version passes `version`; None after `timeout` or `wake()`."""
        with self._changed:
            if self._version <= version:
                self._changed.wait(timeout)
            if self._version > version:
                return self._version, self._devices
            return None

    def wake(self) -> None:
        """Wake every waiter now (a stream whose RPC ended should not sleep out its timeout)."""
        with self._changed:
            self._changed.notify_all()
