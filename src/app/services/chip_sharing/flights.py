"""One hardware question per chip at a time, its answer shared by everyone waiting (#44).

Putting a chip in container-sharing mode asks npu-smi (or DCMI) and may hang until its timeout.
Asked under a per-chip lock by every prepare, six pods on one chip paid that timeout one after
another (answered at 10, 20, 30, 40 s, the last two past the kubelet's 45 s), and with per-pod
sockets, whose calls run one at a time on the node, every other call waited behind them.

So the question runs once per chip at a time, on a thread of its own, and each caller waits for
that flight's answer at most `wait_s`: a caller arriving while it flies joins it, and a failed
answer is given to callers arriving within `retry_after_s` after it, at once, with the reason
(the kubelet retries; the first retry after that asks again). A flight past `wait_s` keeps
flying; its callers are told it has not answered yet, and its answer, when it comes, serves the
next ones.
"""

import logging
import threading
import time
from collections.abc import Callable, Mapping

import attrs

from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DeviceName

log = logging.getLogger(__name__)


@attrs.define
class _Flight:
    done: threading.Event = attrs.field(factory=threading.Event)
    error: str | None = None


class ChipFlights:
    def __init__(
        self,
        *,
        wait_s: float,
        retry_after_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._wait_s, self._retry_after_s, self._clock = wait_s, retry_after_s, clock
        self._guard = threading.Lock()
        self._flying: dict[DeviceName, _Flight] = {}
        self._failed: dict[DeviceName, tuple[str, float]] = {}  # chip -> why, asked again after

    def ask(self, questions: Mapping[DeviceName, Callable[[], object]]) -> dict[DeviceName, str]:
        """Why each chip's question (`questions`, by chip) failed, for those that did: the
        error it raised (a DomainError's message; any other error is logged as a bug), or that
        it has not answered within `wait_s`, which all of them share. Chips missing from the
        answer were answered without an error by this call's flights."""
        failures: dict[DeviceName, str] = {}
        flights: dict[DeviceName, _Flight] = {}
        with self._guard:
            for chip, question in sorted(questions.items()):
                failed = self._failed.get(chip)
                if failed is not None and self._clock() < failed[1]:
                    failures[chip] = (
                        f"{failed[0]} (the answer to an earlier prepare; asked again shortly)"
                    )
                elif (flight := self._flying.get(chip)) is not None:
                    flights[chip] = flight
                else:
                    flights[chip] = self._flying[chip] = _Flight()
                    self._start(chip, flights[chip], question)
        deadline = time.monotonic() + self._wait_s
        for chip, flight in flights.items():
            if not flight.done.wait(max(0.0, deadline - time.monotonic())):
                failures[chip] = (
                    f"{chip}: the hardware has not answered within {self._wait_s:g}s whether it "
                    "is in container-sharing mode (still asking: a retry gets the answer)"
                )
            elif flight.error is not None:
                failures[chip] = flight.error
        return failures

    def _start(self, chip: DeviceName, flight: _Flight, question: Callable[[], object]) -> None:
        thread = threading.Thread(
            target=self._fly, args=(chip, flight, question), name=f"share-mode-{chip}", daemon=True
        )
        thread.start()

    def _fly(self, chip: DeviceName, flight: _Flight, question: Callable[[], object]) -> None:
        try:
            question()
        except DomainError as error:
            log.warning("cannot put %s in container-sharing mode: %s", chip, error)
            flight.error = str(error)
        except Exception as error:  # a bug: its callers still get an answer, never a hang
            log.exception("asking whether %s is in container-sharing mode failed", chip)
            flight.error = f"{chip}: {type(error).__name__}: {error}"
        with self._guard:
            del self._flying[chip]
            if flight.error is None:
                self._failed.pop(chip, None)
            else:
                self._failed[chip] = (flight.error, self._clock() + self._retry_after_s)
        flight.done.set()
