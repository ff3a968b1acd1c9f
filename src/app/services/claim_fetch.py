"""Reading a call's claims from the API concurrently, under one deadline.

The kubelet gives NodePrepareResources 45 s for all its claims together. Reading them one by one
multiplies an API server's latency (or its retry budget during an outage) by the number of
claims, so they are read by a few worker threads at once and the call waits at most `deadline_s`:
a claim whose read has not finished by then gets an error of its own, and the kubelet retries it.
Once the deadline passed, no worker starts another read of that call.

The workers (`ReadWorkers`) are daemon threads kept between calls: starting a thread for every
prepare cost about 0.1 ms of CPU, more than the rest of the hand-over. A read stuck in the API
keeps its worker busy, never a later call: a call that finds no idle worker starts another one
(up to `max_threads`; past that its reads queue, still under its deadline), and a worker idle for
`idle_exit_s` ends, so an idle plugin keeps no thread and wakes for none.
"""

import collections
import logging
import threading
import time
from collections.abc import Callable, Sequence

from npu_dra.domain.claims import ClaimRef, ResourceClaim
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimUID

log = logging.getLogger(__name__)

Fetched = ResourceClaim | str  # the claim, or why it could not be read
IDLE_EXIT_S = 5.0  # a burst of calls leaves its extra readers for no longer
MAX_THREADS = 64


class ReadWorkers:
    """Daemon threads that run submitted tasks; a task is never left waiting for a busy one
    while fewer than `max_threads` exist."""

    def __init__(self, *, idle_exit_s: float = IDLE_EXIT_S, max_threads: int = MAX_THREADS):
        self._idle_exit = idle_exit_s
        self._max = max_threads
        self._changed = threading.Condition()
        self._tasks: collections.deque[Callable[[], None]] = collections.deque()
        self._idle = 0  # workers waiting for a task
        self._threads = 0
        self._started = 0  # names the threads

    @property
    def threads(self) -> int:
        with self._changed:
            return self._threads

    def submit(self, task: Callable[[], None]) -> None:
        with self._changed:
            self._tasks.append(task)
            if len(self._tasks) <= self._idle or self._threads >= self._max:
                self._changed.notify()
                return
            self._threads += 1
            self._started += 1
            name = f"claim-get-{self._started}"
        try:
            threading.Thread(target=self._work, name=name, daemon=True).start()
        except RuntimeError:  # no thread to be had: the queued task waits for a busy worker
            with self._changed:
                self._threads -= 1
            log.warning("cannot start a claim-read thread; %d busy ones will read", self._threads)

    def _work(self) -> None:
        while True:
            with self._changed:
                self._idle += 1
                try:
                    while not self._tasks:
                        if not self._changed.wait(self._idle_exit) and not self._tasks:
                            self._threads -= 1
                            return
                finally:
                    self._idle -= 1
                task = self._tasks.popleft()
            task()


def fetch_claims(
    refs: Sequence[ClaimRef],
    get: Callable[[ClaimRef], ResourceClaim],
    *,
    deadline_s: float,
    concurrency: int,
    workers: ReadWorkers,
) -> dict[ClaimUID, Fetched]:
    """Each claim of `refs`, or an error naming it; returns within about `deadline_s`.
    At most `concurrency` of them are read at once."""
    unique = list({ref.uid: ref for ref in refs}.values())
    if not unique:
        return {}
    end = time.monotonic() + deadline_s
    todo = collections.deque(unique)
    results: dict[ClaimUID, Fetched] = {}
    finished = threading.Condition()

    def work() -> None:
        while time.monotonic() < end:
            with finished:
                if not todo:
                    return
                ref = todo.popleft()
            outcome = _read(ref, get)
            with finished:
                results[ref.uid] = outcome
                finished.notify_all()

    for _ in range(min(concurrency, len(unique))):
        workers.submit(work)
    with finished:
        finished.wait_for(
            lambda: len(results) >= len(unique), timeout=max(end - time.monotonic(), 0)
        )
        answered = dict(results)
    return {ref.uid: answered.get(ref.uid) or _late(ref, deadline_s) for ref in refs}


def _late(ref: ClaimRef, deadline_s: float) -> str:
    return (
        f"claim {ref}: the API server did not answer within {deadline_s:g}s; not prepared "
        "(the kubelet retries)"
    )


def _read(ref: ClaimRef, get: Callable[[ClaimRef], ResourceClaim]) -> Fetched:
    try:
        return get(ref)
    except DomainError as error:
        return f"claim {ref}: {error}"
    except Exception as error:  # a bug in one claim's read must not cost the call its deadline
        log.exception("reading claim %s failed", ref)
        return f"claim {ref}: cannot read it: {type(error).__name__}: {error}"
