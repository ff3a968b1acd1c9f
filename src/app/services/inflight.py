"""Which prepares are under way, so an unprepare that overtakes one can cancel it.

A prepare reads its claims from the API outside the state lock (a slow API must not stall every
other call). If the kubelet gives up on it meanwhile, it sends NodeUnprepareResources, which finds
nothing to undo and answers OK; the kubelet never asks again. Without a record of that unprepare,
the late prepare would then write its CDI spec and checkpoint entry, and the claim's devices would
stay held for good. So every prepare registers its claims here before it reads, an unprepare marks
them cancelled, and the prepare commits nothing for a cancelled claim.

An unprepare can also overtake a prepare before it registered: the call waited for a worker, or
its thread had not run yet, when the kubelet cancelled it (its pod is being deleted) and sent the
unprepare. The cancellation reached this process before the unprepare did (one connection, in
order), so `open` asks whether the caller is still there once the claims are registered: if it is
gone, every claim is cancelled at once. Either the unprepare comes later and finds the claims
registered, or it came first and the caller was already gone. All methods are called under the
preparer's state lock.

Where another plugin instance serves beside this one (app/services/instance_state_lock.py), the
unprepare may
reach the other one: then `marks` (adapters/cancel_marks.py) carry it across, and a prepare
commits nothing for a claim marked unprepared after it began (`cancelled_elsewhere`).
"""

import time
from collections.abc import Iterable
from typing import Protocol

from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.ports import CallerGone

UNPREPARED = "unprepared while this prepare waited"
UNPREPARED_ELSEWHERE = "unprepared through the other plugin instance while this prepare waited"


class CancelMarks(Protocol):
    """Unprepares as every instance on the node sees them (times: CLOCK_MONOTONIC)."""

    def mark(self, *, uid: ClaimUID, at: float) -> None: ...

    def marked_since(self, *, uid: ClaimUID, at: float) -> bool: ...


CALLER_GONE = "the kubelet gave up on this call before it ran (cancelled, or past its deadline)"


class PendingPrepare:
    """One prepare call's claims, and why each one cancelled was (an unprepare, its caller gone)."""

    def __init__(self, uids: Iterable[ClaimUID]) -> None:
        self.uids = frozenset(uids)
        self.cancelled: dict[ClaimUID, str] = {}
        self.opened = time.monotonic()


class InFlight:
    def __init__(self, marks: CancelMarks | None = None) -> None:
        self._pending: list[PendingPrepare] = []
        self._marks = marks

    def open(
        self, uids: Iterable[ClaimUID], caller_gone: CallerGone | None = None
    ) -> PendingPrepare:
        pending = PendingPrepare(uids)
        self._pending.append(pending)
        if caller_gone is not None and caller_gone():
            pending.cancelled = dict.fromkeys(pending.uids, CALLER_GONE)
        return pending

    def close(self, pending: PendingPrepare) -> None:
        self._pending.remove(pending)

    def cancel(self, uid: ClaimUID) -> int:
        """Mark `uid` cancelled in every prepare waiting for it; how many there were."""
        waiting = [p for p in self._pending if uid in p.uids]
        for pending in waiting:
            pending.cancelled.setdefault(uid, UNPREPARED)
        if self._marks is not None:
            self._marks.mark(uid=uid, at=time.monotonic())
        return len(waiting)

    def cancelled_since(self, pending: PendingPrepare, uids: Iterable[ClaimUID]) -> set[ClaimUID]:
        """Those of `uids` (claims `pending` committed) another instance unprepared since."""
        if self._marks is None:
            return set()
        return {u for u in uids if self._marks.marked_since(uid=u, at=pending.opened)}

    def cancelled_elsewhere(self, pending: PendingPrepare, fresh: Iterable[ClaimUID]) -> None:
        """Mark cancelled those of `fresh` (claims `pending` is about to commit) that another
        instance unprepared after `pending` began."""
        waiting = (uid for uid in fresh if uid not in pending.cancelled)
        for uid in self.cancelled_since(pending, waiting):
            pending.cancelled[uid] = UNPREPARED_ELSEWHERE
