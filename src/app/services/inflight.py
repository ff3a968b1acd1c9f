"""Which prepares are waiting on the API, so an unprepare that overtakes one can cancel it.

A prepare reads its claims from the API outside the state lock (a slow API must not stall every
other call). If the kubelet gives up on it meanwhile, it sends NodeUnprepareResources, which finds
nothing to undo and answers OK; the kubelet never asks again. Without a record of that unprepare,
the late prepare would then write its CDI spec and checkpoint entry, and the claim's devices would
stay held for good. So every prepare registers its claims here before it reads, an unprepare marks
them cancelled, and the prepare commits nothing for a cancelled claim. All methods are called
under the preparer's state lock.
"""

from collections.abc import Iterable

from npu_dra.domain.ids import ClaimUID


class PendingPrepare:
    """One prepare call's claims, and those an unprepare cancelled while it waited."""

    def __init__(self, uids: Iterable[ClaimUID]) -> None:
        self.uids = frozenset(uids)
        self.cancelled: set[ClaimUID] = set()


class InFlight:
    def __init__(self) -> None:
        self._pending: list[PendingPrepare] = []

    def open(self, uids: Iterable[ClaimUID]) -> PendingPrepare:
        pending = PendingPrepare(uids)
        self._pending.append(pending)
        return pending

    def close(self, pending: PendingPrepare) -> None:
        self._pending.remove(pending)

    def cancel(self, uid: ClaimUID) -> int:
        """Mark `uid` cancelled in every prepare waiting for it; how many there were."""
        waiting = [p for p in self._pending if uid in p.uids]
        for pending in waiting:
            pending.cancelled.add(uid)
        return len(waiting)
