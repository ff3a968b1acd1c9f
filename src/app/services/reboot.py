"""After a reboot, the claims still prepared get back what the reboot destroyed before the plugin
serves: their CDI specs (a tmpfs CDI directory is empty) and their vNPUs (gone with the chip's
state), each device first checked to be the one prepared (restart_repair, claim_specs). Pods
whose containers the kubelet starts again then find them.

Without a reboot the plugin serves from the checkpoint at once and does that repair in the
background (hardware_reconcile); after one, the repair's first pass runs before serving. The boot
is recorded as repaired once a pass has run with the hardware answering, so a plugin that
restarts before then (the hardware slow to come up) repairs before serving again.
"""

import logging
from collections.abc import Callable
from typing import Protocol

from npu_dra.app.services.restart_repair import RepairReport
from npu_dra.domain.errors import StateError

log = logging.getLogger(__name__)


class BootIds(Protocol):
    """adapters/boot_id.py."""

    def current(self) -> str: ...

    def last(self) -> str | None: ...

    def remember(self, boot_id: str) -> None: ...

    def remove_temp_files(self) -> tuple[str, ...]: ...


class RebootCheck:
    def __init__(self, boots: BootIds) -> None:
        self._boots = boots
        self._current: str | None = None

    def new_boot(self) -> bool:
        """Whether this boot is not the one last repaired in (also when that is unknown: no
        record, or the boot id unreadable); says which in the log. Removes what a write of the
        record cut short by a kill left."""
        removed = self._boots.remove_temp_files()
        if removed:
            log.info("removed temp files %s of a boot record write cut short", list(removed))
        try:
            self._current = self._boots.current()
        except StateError as error:
            log.warning("%s: cannot tell a reboot, so repairing as after one", error)
            return True
        last = self._boots.last()
        if last == self._current:
            return False
        if last is None:
            log.info("boot %s: no boot recorded yet, repairing as after a reboot", self._current)
        else:
            log.info("the node rebooted (boot %s, was %s)", self._current, last)
        return True

    def recorded(self, repair: Callable[[], RepairReport]) -> Callable[[], RepairReport]:
        """`repair`, recording this boot as repaired once a pass runs with the hardware
        answering (call new_boot first)."""

        def attempt() -> RepairReport:
            report = repair()
            done = report.waiting is None and self._current is not None
            if done and self._current is not None and self._boots.last() != self._current:
                self._boots.remember(self._current)
                log.info("boot %s: prepared claims repaired", self._current)
            return report

        return attempt
