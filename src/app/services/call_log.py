"""What the kubelet's calls did, in the log: each call at debug, a summary at info.

A line per claim at info costs every call a formatted record and fills the log of a busy node
with what the kubelet logs already. Failures are logged where they happen (warning); this module
logs each call at debug and, at most once per `summary_s`, one info line counting what the calls
since the last one did.
"""

import logging
import threading
import time
from collections.abc import Mapping, Sequence

from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.prepare import ClaimOutcome

SUMMARY_S = 60.0


class CallLog:
    def __init__(self, log: logging.Logger, *, summary_s: float = SUMMARY_S) -> None:
        self._log = log
        self._summary_s = summary_s
        self._lock = threading.Lock()
        self._counts = {"prepared": 0, "unprepared": 0, "failed": 0, "calls": 0}
        self._since = time.monotonic()

    def prepared(
        self, refs: Sequence[ClaimRef], outcomes: Mapping[ClaimUID, ClaimOutcome], took_s: float
    ) -> None:
        failed = sum(1 for ref in refs if outcomes[ref.uid].error)
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug(
                "prepare of %d claim(s): %d failed, %.1f ms", len(refs), failed, took_s * 1e3
            )
        self._count("prepared", len(refs) - failed, failed)

    def unprepared(
        self, refs: Sequence[ClaimRef], errors: Mapping[ClaimUID, str | None], took_s: float
    ) -> None:
        failed = sum(1 for ref in refs if errors[ref.uid])
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug(
                "unprepare of %d claim(s): %d failed, %.1f ms", len(refs), failed, took_s * 1e3
            )
        self._count("unprepared", len(refs) - failed, failed)

    def _count(self, what: str, done: int, failed: int) -> None:
        now = time.monotonic()
        with self._lock:
            self._counts[what] += done
            self._counts["failed"] += failed
            self._counts["calls"] += 1
            if now - self._since < self._summary_s:
                return
            counts, self._since = dict(self._counts), now
            self._counts = dict.fromkeys(self._counts, 0)
        self._log.info(
            "%d call(s) in the last %.0f s: %d claim(s) prepared, %d unprepared, %d failed",
            counts["calls"],
            self._summary_s,
            counts["prepared"],
            counts["unprepared"],
            counts["failed"],
        )
