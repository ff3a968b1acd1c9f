"""The device plugin's health monitor: the periodic probe that keeps every resource's device
list, and so its health, current.

The kubelet learns about a failing chip only from a new ListAndWatch message, so the hardware is
probed every interval and each family's board gets the fresh list; a board wakes its streams
only when its list changed. A device that vanishes from the probe (a card that dropped off the
bus) stays listed as Unhealthy: removing it would let the kubelet forget pods already using it.
A failed probe keeps the last lists, since one npu-smi hiccup must not take every chip away.
Hardware that announces faults (a FaultNotifier: DCMI's fault events) is probed at once on each
announcement; the interval's probe stays as the fallback.
"""

import logging
import threading
from collections.abc import Mapping

import attrs

from npu_dra.adapters.grpc.device_plugin.board import DeviceBoard
from npu_dra.domain.classic_resources import by_family
from npu_dra.domain.device import Device, Health
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ports import FaultNotifier, HardwareProbe

log = logging.getLogger(__name__)


class HealthMonitor:
    def __init__(
        self, probe: HardwareProbe, boards: Mapping[str, DeviceBoard], *, interval: float
    ) -> None:
        self._probe = probe
        self._boards = boards
        self.interval = interval
        self._known = {family: board.devices() for family, board in boards.items()}
        self._wake = threading.Event()

    def tick(self) -> None:
        """Probe once and publish each family's list; a probe error is logged, not raised."""
        try:
            fresh = by_family(self._probe.probe().devices)
        except DomainError as error:
            log.warning("health probe failed, keeping the last device lists: %s", error)
            return
        for family in sorted(set(fresh) - set(self._boards)):
            log.warning("ignoring %s devices that appeared after start", family)
        for family, board in self._boards.items():
            devices = _with_vanished(self._known[family], fresh.get(family, ()))
            self._known[family] = devices
            if board.publish(devices):
                _log_health(family, devices)

    def wake(self) -> None:
        """Probe now (a fault was announced), or notice `stop` now; safe from any thread."""
        self._wake.set()

    def run(self, stop: threading.Event) -> None:
        """Probe every interval, and at once when woken, until `stop` is set (then `wake()`)."""
        if isinstance(self._probe, FaultNotifier):
            self._probe.subscribe_faults(self.wake)
        while not stop.is_set():
            self._wake.wait(self.interval)
            self._wake.clear()
            if stop.is_set():
                return
            self.tick()


def _with_vanished(before: tuple[Device, ...], now: tuple[Device, ...]) -> tuple[Device, ...]:
    present = {d.name for d in now}
    gone = [attrs.evolve(d, health=Health.UNHEALTHY) for d in before if d.name not in present]
    return tuple(sorted((*now, *gone), key=lambda d: d.physical_id))


def _log_health(family: str, devices: tuple[Device, ...]) -> None:
    bad = [f"{d.name}={d.health.value}" for d in devices if not d.health.usable]
    log.info("%s: %d device(s), unusable: %s", family, len(devices), ", ".join(bad) or "none")
