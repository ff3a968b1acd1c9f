"""ChipLocks: one lock per chip for the calls that change a chip's vNPUs (app/services/vnpu.py),
so that chips work in parallel and one chip's calls run one at a time."""

import contextlib
import logging
import threading
from collections.abc import Iterable, Iterator

from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import DeviceName

log = logging.getLogger(__name__)


class ChipLocks:
    """One lock per chip, taken in sorted name order (the order that keeps them deadlock-free).
    A holder makes npu-smi calls, each bounded by --probe-timeout; a wait past WAIT_S ends with
    a PrepareError naming the chip, and one past WARN_S is logged."""

    WAIT_S, WARN_S = 60.0, 5.0

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[DeviceName, threading.Lock] = {}

    @contextlib.contextmanager
    def holding(self, chips: Iterable[DeviceName]) -> Iterator[None]:
        with self._guard:
            locks = {c: self._locks.setdefault(c, threading.Lock()) for c in sorted(set(chips))}
        with contextlib.ExitStack() as stack:
            for chip, lock in locks.items():
                self._acquire(chip, lock)
                stack.callback(lock.release)
            yield

    def _acquire(self, chip: DeviceName, lock: threading.Lock) -> None:
        if lock.acquire(timeout=self.WARN_S):
            return
        log.warning("waiting for %s: another call has held it for %.0fs", chip, self.WARN_S)
        if not lock.acquire(timeout=self.WAIT_S - self.WARN_S):
            raise PrepareError(f"{chip}: another call has held it for {self.WAIT_S:.0f}s; retry")
