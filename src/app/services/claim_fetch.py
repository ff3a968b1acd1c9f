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


class _Idle:
    """A worker waiting for a task: `submit` hands it one and sets `ready`."""

    __slots__ = ("ready", "task")

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.task: Callable[[], None] | None = None


class ReadWorkers:
    """Daemon threads that run submitted tasks; a task is never left waiting for a busy one
    while fewer than `max_threads` exist. The worker idle the shortest takes the next task, so
    after a burst the extra ones stay idle and end."""

    def __init__(self, *, idle_exit_s: float = IDLE_EXIT_S, max_threads: int = MAX_THREADS):
        self._idle_exit = idle_exit_s
        self._max = max_threads
        self._lock = threading.Lock()
        self._idle: list[_Idle] = []  # a stack: the last one to become idle is woken first
        self._queued: collections.deque[Callable[[], None]] = collections.deque()
        self._threads = 0
        self._started = 0  # names the threads

    @property
    def threads(self) -> int:
        with self._lock:
            return self._threads

    def submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            if self._idle:
                waiting = self._idle.pop()
                waiting.task = task
                waiting.ready.set()
                return
            if self._threads >= self._max:
                self._queued.append(task)  # the next worker to finish takes it
                return
            self._threads += 1
            self._started += 1
            name = f"claim-get-{self._started}"
        try:
            threading.Thread(target=self._work, args=(task,), name=name, daemon=True).start()
        except RuntimeError as error:  # no thread to be had: a busy worker takes it when done
            with self._lock:
                self._threads -= 1
                self._queued.append(task)
            log.warning(
                "cannot start a claim-read thread (%s): the read waits for a busy one", error
            )

    def _work(self, task: Callable[[], None]) -> None:
        me = _Idle()
        while True:
            try:
                task()
            except Exception:  # the tasks catch their own errors; never lose the worker
                log.exception("a claim-read task failed")
            with self._lock:
                if self._queued:
                    task = self._queued.popleft()
                    continue
                me.ready.clear()
                self._idle.append(me)
            if not me.ready.wait(self._idle_exit):
                with self._lock:
                    if not me.ready.is_set():  # no task arrived in time: end
                        self._idle.remove(me)
                        self._threads -= 1
                        return
            assert me.task is not None
            task, me.task = me.task, None


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
