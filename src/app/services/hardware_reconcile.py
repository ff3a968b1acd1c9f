"""The start-up repair's part that needs the hardware (restart_repair: every CDI spec recomputed
from the inventory, the chips' vNPUs brought in step with the checkpoint), run in the background
once the plugin serves, so no answer to the kubelet ever waits for npu-smi.

It is tried at once, then again with back-off (1 s, doubling up to 5 min) while the hardware
does not answer, until one pass has run with the hardware answering. What it finds is logged once
per change, never once per try: a hung npu-smi gives one line, not one every few seconds. A vNPU
no checkpoint record names is reported (a warning, and a Warning Event on the Node, which the
event sink rate-limits), never destroyed; a prepared claim whose device is gone, or is now another
device, gets a Warning Event (PreparedDeviceGone) on the claim.

After a reboot the first pass runs before the plugin serves (`run_once`), so containers started
again find their CDI specs and vNPUs; `run` goes on from there if the hardware did not answer.
"""

import logging
import threading
from collections.abc import Callable

from npu_dra.app.services.event_sink import EventSink
from npu_dra.app.services.restart_repair import RepairReport, log_report
from npu_dra.domain.backoff import Backoff
from npu_dra.domain.errors import DomainError
from npu_dra.domain.events import (
    MAX_NOTE,
    ClusterEvent,
    EventType,
    Regarding,
    device_gone_event,
)
from npu_dra.domain.ids import NodeName

log = logging.getLogger(__name__)

FIRST_RETRY_S = 1.0
MAX_RETRY_S = 300.0
STOP_WAIT_S = 2.0  # a pass stuck on a hung npu-smi is not waited for (daemon thread)
FOREIGN_REASON = "ForeignVnpu"
Said = tuple[str | None, tuple[str, ...], tuple[str, ...], tuple[object, ...]]


class HardwareReconcile:
    def __init__(
        self,
        *,
        attempt: Callable[[], RepairReport],
        what: str,
        node: NodeName,
        events: EventSink | None = None,
        first_retry_s: float = FIRST_RETRY_S,
        max_retry_s: float = MAX_RETRY_S,
    ) -> None:
        self._attempt = attempt
        self._what = what  # how the log names it: "vNPU reconcile", "CDI spec check"
        self._node = node
        self._events = events
        self._first = first_retry_s
        self._max = max_retry_s
        self._stop = threading.Event()
        self.finished = threading.Event()  # a pass ran with the hardware answering
        self._thread: threading.Thread | None = None
        self._said: Said | None = None  # what the last pass found, as told

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="hardware-reconcile", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT_S)

    def run_once(self) -> RepairReport:
        """One pass now, in the caller's thread (before serving, after a reboot); `run`
        (start) then has nothing left to do if the hardware answered."""
        report = self._try()
        self._said = self._tell(report, self._said, self._first)
        if report.waiting is None:
            self.finished.set()
        return report

    def run(self) -> None:
        """Until a pass runs with the hardware answering, or stop()."""
        backoff = Backoff(self._first, max(self._first, self._max))
        while not self._stop.is_set() and not self.finished.is_set():
            report = self._try()
            delay = backoff.next()
            self._said = self._tell(report, self._said, delay)
            if report.waiting is None:
                self.finished.set()
                return
            if self._stop.wait(delay):
                return

    def _try(self) -> RepairReport:
        try:
            return self._attempt()
        except DomainError as error:  # a store failing: the next try may find it back
            return RepairReport(waiting=str(error))
        except Exception:  # a bug must not end the worker silently
            log.exception("%s failed", self._what)
            return RepairReport(waiting="an unexpected error (logged above)")

    def _tell(self, report: RepairReport, said: Said | None, delay: float) -> Said:
        """Log (and report) what changed since the last try; the new state."""
        now: Said = (report.waiting, report.unrepairable, report.foreign, report.gone)
        if now == said:
            log.debug("%s: nothing changed (%s)", self._what, report.waiting)
            return now
        log_report(report, f"{self._what}:")
        if report.foreign and (said is None or report.foreign != said[2]):
            self._report_foreign(report.foreign)
        for ref, why in report.gone:
            if self._events is not None and (said is None or (ref, why) not in said[3]):
                self._events.emit(device_gone_event(ref, why))
        if report.waiting is not None:
            log.warning(
                "%s waits for the hardware, retrying in %.0fs (less often after): %s",
                self._what, delay, report.waiting,
            )  # fmt: skip
        else:
            log.info("%s done: the hardware answered", self._what)
        return now

    def _report_foreign(self, foreign: tuple[str, ...]) -> None:
        if self._events is None:
            return
        note = "vNPU(s) no prepared claim holds, left as they are: " + "; ".join(foreign)
        regarding = Regarding("Node", self._node)
        self._events.emit(
            ClusterEvent(regarding, FOREIGN_REASON, note[:MAX_NOTE], EventType.WARNING)
        )
