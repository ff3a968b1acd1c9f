"""The checkpoint in memory, saved by group commit: every change staged while one durable save is
being written shares the next save.

A durable save costs a few milliseconds of disk flushes whatever it holds. Saving once per claim
under the state lock serializes every caller behind every other caller's flushes. Here callers
change the in-memory checkpoint and stage it (under `lock`, cheap), then wait outside the lock
until a save holding their change has returned. The first waiter that finds no save running
writes the newest staged checkpoint; those who staged meanwhile wait for it, and the next waiter
writes the following one. N concurrent callers pay about two saves, not N.

Contracts:
- `wait(ticket)` returns only once a save of a checkpoint at least as new as the one staged with
  `ticket` has returned: nobody is told "prepared" (or "unprepared") before it is durable.
- A failed save rolls the in-memory checkpoint back to the last one saved, and every change
  staged until then fails: `wait` raises the save's error to each of their waiters (a change
  staged on a state that was rolled back must not reach the disk through a later save).
- Saves never overlap and are written in staging order, so the file only ever moves forward.
- Lock order: `lock`, then the internal condition; `wait` is never called holding `lock`.
- Where another process shares the store (app/services/instance_state_lock.py), a change must be
saved
  before the lock that process also takes is let go: `save_staged` writes it holding `lock`,
  so `wait` then finds it settled (or failed) and writes nothing.
"""

import collections
import threading
from collections.abc import Callable

from npu_dra.app.services.bounded_lock import BoundedLock
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.errors import DomainError

FAILURES_KEPT = 256  # failed saves remembered for waiters that have not woken yet


class GroupCommit:
    def __init__(self, save: Callable[[Checkpoint], None], saved: Checkpoint) -> None:
        # held to read `current` and stage a change derived from it (app/services/bounded_lock)
        self.lock = BoundedLock("state lock")
        self._save = save
        self._changed = threading.Condition()
        self._saved = saved  # what the store holds
        self._current = saved  # the newest staged checkpoint
        self._version = 0  # of `_current`
        self._settled = 0  # every version up to this one is saved, or failed
        self._writing = False
        self._failures: collections.deque[tuple[int, int, DomainError]] = collections.deque(
            maxlen=FAILURES_KEPT
        )

    @property
    def current(self) -> Checkpoint:
        """The newest checkpoint, saved or staged (read it holding `lock`)."""
        return self._current

    def reset(self, saved: Checkpoint) -> None:
        """What the store holds now (after a repair at start); holding `lock`, nothing staged."""
        with self._changed:
            self._saved = self._current = saved

    def stage(self, checkpoint: Checkpoint) -> int:
        """Make `checkpoint` current and due for saving (holding `lock`); the ticket to wait on."""
        with self._changed:
            self._version += 1
            self._current = checkpoint
            return self._version

    def latest(self) -> int:
        """A ticket that is settled once everything staged so far is (holding `lock`)."""
        with self._changed:
            return self._version

    def wait(self, ticket: int) -> None:
        """Until the change staged with `ticket` is durable; the save's error if it failed."""
        with self._changed:
            while True:
                for first, last, error in self._failures:
                    if first <= ticket <= last:
                        raise error
                if ticket <= self._settled:
                    return
                if self._writing:
                    self._changed.wait()
                else:
                    self._write_newest()

    def save_staged(self) -> None:
        """Holding `lock`: save what is staged now, before `lock` goes; a failure rolls back
        and fails the staged changes' waiters, as a waiter's save would. Used for every change
        or for none: then nothing unsaved is ever left staged outside `lock`, and no waiter
        is writing meanwhile."""
        with self._changed:
            if self._settled >= self._version:
                return
            target, checkpoint = self._version, self._current
            try:
                self._save(checkpoint)
            except DomainError as error:
                self._fail(error)
            else:
                self._saved, self._settled = checkpoint, target
            self._changed.notify_all()

    def _write_newest(self) -> None:
        """Save the newest staged checkpoint (called holding the condition, released meanwhile)."""
        target, checkpoint = self._version, self._current
        self._writing = True
        self._changed.release()
        try:
            self._save(checkpoint)
        except DomainError as error:
            self._roll_back(error)
        else:
            with self._changed:
                self._saved = checkpoint
                self._settled = target
        finally:
            self._changed.acquire()
            self._writing = False
            self._changed.notify_all()

    def _roll_back(self, error: DomainError) -> None:
        with self.lock, self._changed:  # nobody is between reading `current` and staging
            self._fail(error)

    def _fail(self, error: DomainError) -> None:
        """Every change staged since the last save failed with `error` (holding both locks)."""
        self._failures.append((self._settled + 1, self._version, error))
        # The saved checkpoint is current again, under a version of its own: a caller that
        # stages nothing after this waits on it and must not find it among the failed.
        self._version += 1
        self._current = self._saved
        self._settled = self._version
