"""BoundedLock: a thread lock whose wait ends. The preparer's state lock is held for local steps
(milliseconds: a checkpoint read or save, a CDI spec written); a wait past WARN_S is logged, and
one past the bound ends in a StateError naming the lock, so a holder stuck for good fails the
calls behind it with a reason instead of holding them silently."""

import logging
import threading
from types import TracebackType

from npu_dra.domain.errors import StateError

log = logging.getLogger(__name__)

WAIT_S = 30.0
WARN_S = 2.0


class BoundedLock:
    def __init__(self, what: str, wait_s: float = WAIT_S) -> None:
        self._what, self._wait_s = what, wait_s
        self._lock = threading.Lock()

    def __enter__(self) -> "BoundedLock":
        if self._lock.acquire(timeout=min(WARN_S, self._wait_s)):
            return self
        log.warning("waiting for the %s: held for more than %.0fs", self._what, WARN_S)
        if self._lock.acquire(timeout=max(0.0, self._wait_s - WARN_S)):
            return self
        raise StateError(f"the {self._what} has been held for more than {self._wait_s:.0f}s")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._lock.release()
