"""Claim device status (KEP-4817): after a prepare returns, this node's entries of the claim's
`status.devices` say what each prepared device is (domain/device_facts.py); after an unprepare
they go. Never on the kubelet's critical path: `ClaimStatusReports` only notes the wish and
returns; one worker thread writes.

- Bounded: at most `capacity` claims wait (one wish per claim, the latest winning: a clear
  replaces a report not yet sent); past it a wish is dropped and counted. A dropped clear leaves
  entries the API server itself drops when the claim is deallocated.
- Retried with backoff (domain Backoff, per claim) while the API server is unavailable, up to
  `attempts` tries; the first failure of a claim is a warning, the following ones debug lines
  until it is given up (a warning again), so an outage does not flood the log.
- Decided at write time, from the state as it is then: a report for a claim no longer prepared
  (an unprepare overtook it, here or in the other plugin instance that shares the state:
  services/instance_state_lock.py), or a clear for one prepared again, is not sent. Both
  instances write as one field manager per node (adapters/cluster/kube/claim_status.py), so
  either one clears the other's.
"""

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence

import attrs

from npu_dra.domain.backoff import Backoff
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.device_facts import claim_facts
from npu_dra.domain.errors import DomainError, NotFound
from npu_dra.domain.ids import ClaimUID, DriverName, NodeName
from npu_dra.domain.ports import CallerGone, ClaimStatusWriter, NodeClaims
from npu_dra.domain.prepare import ClaimOutcome

log = logging.getLogger(__name__)

CAPACITY = 1024
ATTEMPTS = 8
FIRST_WAIT_S, MAX_WAIT_S = 0.5, 30.0


@attrs.define
class _Wish:
    ref: ClaimRef
    report: bool  # False: clear
    due: float
    backoff: Backoff
    tries: int = 0


class ClaimStatusWorker:
    """Writes the wishes `report` and `clear` note, on a thread started by the first one."""

    def __init__(
        self,
        writer: ClaimStatusWriter,
        *,
        prepared: Callable[[], Checkpoint],
        inventory: Callable[[], NodeInventory | None],
        driver: DriverName,
        node: NodeName,
        capacity: int = CAPACITY,
        attempts: int = ATTEMPTS,
        backoff: Callable[[], Backoff] = lambda: Backoff(FIRST_WAIT_S, MAX_WAIT_S),
        clock: Callable[[], float] = time.monotonic,
        threaded: bool = True,  # False: nothing is written until `run_due` (tests)
    ) -> None:
        self._writer, self._prepared, self._inventory = writer, prepared, inventory
        self._driver, self._node = driver, node
        self._capacity, self._attempts, self._backoff = capacity, attempts, backoff
        self._clock, self._threaded = clock, threaded
        self._wishes: dict[ClaimUID, _Wish] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self.dropped = self.written = self.given_up = 0

    def report(self, ref: ClaimRef) -> None:
        self._note(ref, report=True)

    def clear(self, ref: ClaimRef) -> None:
        self._note(ref, report=False)

    def idle(self) -> bool:
        """Whether nothing waits to be written (tests)."""
        with self._changed:
            return not self._wishes

    def _note(self, ref: ClaimRef, *, report: bool) -> None:
        with self._changed:
            if ref.uid not in self._wishes and len(self._wishes) >= self._capacity:
                self.dropped += 1
                log.warning("claim %s: status not written (%d claims wait)", ref, self._capacity)
                return
            self._wishes[ref.uid] = _Wish(ref, report, self._clock(), self._backoff())
            if self._thread is None and self._threaded:
                self._thread = threading.Thread(target=self._run, name="claim-status", daemon=True)
                self._thread.start()
            self._changed.notify()

    def run_due(self) -> int:
        """Write, in this thread, every wish due now; how many were tried."""
        tried = 0
        while (wish := self._due()) is not None:
            self._write(wish)
            tried += 1
        return tried

    def _due(self) -> _Wish | None:
        with self._changed:
            wish = min(self._wishes.values(), key=lambda w: w.due, default=None)
            if wish is None or wish.due > self._clock():
                return None
            return self._wishes.pop(wish.ref.uid)

    def _run(self) -> None:
        while True:
            wish = self._next()
            try:
                self._write(wish)
            except Exception:  # a bug must not end the worker
                log.exception("claim %s: status not written", wish.ref)

    def _next(self) -> _Wish:
        """The earliest due wish, once due (waiting for one, holding nothing else)."""
        with self._changed:
            while (wish := self._due()) is None:
                soonest = min((w.due for w in self._wishes.values()), default=None)
                self._changed.wait(None if soonest is None else soonest - self._clock())
            return wish

    def _write(self, wish: _Wish) -> None:
        claim = self._prepared().claims.get(wish.ref.uid)
        if wish.report != (claim is not None and claim.ref == wish.ref):
            return  # unprepared since (a report), or prepared again (a clear): nothing to say
        inventory = self._inventory()
        try:
            if claim is not None and wish.report:
                if inventory is None:
                    raise DomainError("no inventory yet")
                devices = claim_facts(claim, inventory, self._driver)
            else:
                devices = ()
            self._writer.write_device_status(
                ref=wish.ref, driver=self._driver, node=self._node, devices=devices
            )
            self.written += 1
        except NotFound:
            log.debug("claim %s is gone: no status to write", wish.ref)
        except DomainError as error:
            self._retry(wish, error)

    def _retry(self, wish: _Wish, error: DomainError) -> None:
        wish.tries += 1
        if wish.tries >= self._attempts:
            self.given_up += 1
            log.warning("claim %s: status not written, %d tries: %s", wish.ref, wish.tries, error)
            return
        wait = wish.backoff.next()
        level = logging.WARNING if wish.tries == 1 else logging.DEBUG
        log.log(level, "claim %s: status not written (%s); again in %.1fs", wish.ref, error, wait)
        with self._changed:
            if wish.ref.uid not in self._wishes:  # a newer wish replaces it
                self._wishes[wish.ref.uid] = attrs.evolve(wish, due=self._clock() + wait)
                self._changed.notify()


class ClaimStatusReports:
    """NodeClaims that notes, after each call, the status to write: a report for every claim
    prepared, a clear for every claim unprepared. Answers exactly what `inner` answered."""

    def __init__(self, inner: NodeClaims, worker: ClaimStatusWorker | None) -> None:
        self._inner, self._worker = inner, worker

    def prepare(
        self, refs: Sequence[ClaimRef], caller_gone: CallerGone | None = None
    ) -> Mapping[ClaimUID, ClaimOutcome]:
        outcomes = self._inner.prepare(refs, caller_gone)
        if self._worker is not None:
            for ref in refs:
                outcome = outcomes.get(ref.uid)
                if outcome is not None and outcome.error is None:
                    self._worker.report(ref)
        return outcomes

    def unprepare(self, refs: Sequence[ClaimRef]) -> Mapping[ClaimUID, str | None]:
        errors = self._inner.unprepare(refs)
        if self._worker is not None:
            for ref in refs:
                if ref.uid in errors and errors[ref.uid] is None:
                    self._worker.clear(ref)
        return errors
