"""Reading a call's claims from the API concurrently, under one deadline.

The kubelet gives NodePrepareResources 45 s for all its claims together. Reading them one by one
multiplies an API server's latency (or its retry budget during an outage) by the number of
claims, so they are read by a few worker threads at once and the call waits at most `deadline_s`:
a claim whose read has not finished by then gets an error of its own, and the kubelet retries it.
Once the deadline passed, no worker starts another read of that call.

The workers (`ReadWorkers`) are daemon threads kept between calls: starting a thread for every
prepare cost about 0.1 ms of CPU, more than the rest of the hand-over. A read stuck in the API
keeps its worker busy, never a later call: a call that finds no idle worker starts another one,
and a worker idle for `idle_exit_s` ends, so an idle plugin keeps no thread and wakes for none.

At most MAX_READS reads run at once, and a read never queues behind them: during an outage each
pod's prepare waits here until its deadline, holding one of the DRA server's threads, so this
bound is what leaves that server threads for everything else (GetInfo, unprepare, prepares of
claims already prepared, the liveness check: app/kubelet_plugin/servers.py sizes its pool from
it). A call that finds every reader busy gets an error per new claim at once (the kubelet
retries), and once a hung API server is back a new claim is read at once, not after the reads
still stuck in it.
"""

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from npu_dra.domain.claims import ClaimRef, ResourceClaim
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.ports import ClusterApi

log = logging.getLogger(__name__)

Fetched = ResourceClaim | str  # the claim, or why it could not be read
IDLE_EXIT_S = 5.0  # a burst of calls leaves its extra readers for no longer
# Claim reads at once: above the kubelet's default of 110 pods, each starting with a new claim.
MAX_READS = 128


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

    def __init__(self, *, idle_exit_s: float = IDLE_EXIT_S, max_threads: int = MAX_READS):
        self._idle_exit = idle_exit_s
        self._max = max_threads
        self._lock = threading.Lock()
        self._idle: list[_Idle] = []  # a stack: the last one to become idle is woken first
        self._queued: collections.deque[Callable[[], None]] = collections.deque()
        self._threads = 0
        self._busy = 0  # tasks handed over and not finished
        self._started = 0  # names the threads
        self._refused = 0  # tasks try_submit turned away since it last took one

    @property
    def threads(self) -> int:
        with self._lock:
            return self._threads

    @property
    def max_threads(self) -> int:
        return self._max

    def submit(self, task: Callable[[], None]) -> None:
        """Run `task` on a worker; with `max_threads` tasks running it waits for one to end."""
        self._hand_over(task, refuse_when_busy=False)

    def try_submit(self, task: Callable[[], None]) -> bool:
        """Run `task` on a worker at once, or, with `max_threads` tasks running, run nothing
        and answer False: the caller is never queued behind reads stuck in a hung server."""
        return self._hand_over(task, refuse_when_busy=True)

    def _hand_over(self, task: Callable[[], None], *, refuse_when_busy: bool) -> bool:
        with self._lock:
            if refuse_when_busy and not self._admit():
                return False
            self._busy += 1
            if self._idle:
                waiting = self._idle.pop()
                waiting.task = task
                waiting.ready.set()
                return True
            if self._threads >= self._max:
                self._queued.append(task)  # the next worker to finish takes it
                return True
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
        return True

    def _admit(self) -> bool:
        """Whether a reader is free (holding the lock); says once when they all became busy
        and once when one is free again, never once per call."""
        if self._busy >= self._max:
            if not self._refused:
                log.warning(
                    "all %d claim reads are waiting for the API server: new claims are "
                    "refused at once (the kubelet retries) until one ends",
                    self._max,
                )
            self._refused += 1
            return False
        if self._refused:
            log.info("claim reads free again; %d refused meanwhile", self._refused)
            self._refused = 0
        return True

    def _work(self, task: Callable[[], None]) -> None:
        me = _Idle()
        while True:
            try:
                task()
            except Exception:  # the tasks catch their own errors; never lose the worker
                log.exception("a claim-read task failed")
            with self._lock:
                self._busy -= 1
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


class Prefetched(Protocol):
    """Claims read before their prepare (app/services/claim_prefetch.py)."""

    def take(self, ref: ClaimRef) -> ResourceClaim | None: ...

    def forget(self, uids: Iterable[ClaimUID]) -> None: ...


class ClaimReads:
    """The claims a prepare call has not prepared yet, read from the API server."""

    def __init__(
        self,
        cluster: ClusterApi,
        *,
        deadline_s: float,
        concurrency: int,
        prefetched: Prefetched | None = None,
    ) -> None:
        self._cluster, self._prefetched = cluster, prefetched
        self._deadline, self._concurrency = deadline_s, concurrency
        self._workers = ReadWorkers()

    def fetch(self, refs: Sequence[ClaimRef]) -> dict[ClaimUID, Fetched]:
        """Each claim: from the prefetch where it has it right, else read now."""
        ready: dict[ClaimUID, Fetched] = {}
        if self._prefetched is not None:
            for ref in refs:
                if (claim := self._prefetched.take(ref)) is not None:
                    ready[ref.uid] = claim
        rest = [ref for ref in refs if ref.uid not in ready]
        read = fetch_claims(
            rest,
            lambda ref: self._cluster.get_claim(ref=ref),
            deadline_s=self._deadline,
            concurrency=self._concurrency,
            workers=self._workers,
        )
        return {**ready, **read}

    def forget(self, refs: Sequence[ClaimRef]) -> None:
        """`refs` were unprepared: a prefetched copy is not used again."""
        if self._prefetched is not None:
            self._prefetched.forget(ref.uid for ref in refs)


def fetch_claims(
    refs: Sequence[ClaimRef],
    get: Callable[[ClaimRef], ResourceClaim],
    *,
    deadline_s: float,
    concurrency: int,
    workers: ReadWorkers,
) -> dict[ClaimUID, Fetched]:
    """Each claim of `refs`, or an error naming it; returns within about `deadline_s`.
    At most `concurrency` of them are read at once, fewer if other calls' reads hold the
    readers; with none free, every new claim gets its error at once."""
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

    readers = sum(workers.try_submit(work) for _ in range(min(concurrency, len(unique))))
    if not readers:
        return {ref.uid: _no_reader(ref, workers.max_threads) for ref in refs}
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


def _no_reader(ref: ClaimRef, reads: int) -> str:
    return (
        f"claim {ref}: not read: the API server did not answer the {reads} claim reads already "
        "waiting for it; not prepared (the kubelet retries)"
    )


def _read(ref: ClaimRef, get: Callable[[ClaimRef], ResourceClaim]) -> Fetched:
    try:
        return get(ref)
    except DomainError as error:
        return f"claim {ref}: {error}"
    except Exception as error:  # a bug in one claim's read must not cost the call its deadline
        log.exception("reading claim %s failed", ref)
        return f"claim {ref}: cannot read it: {type(error).__name__}: {error}"
