"""Prepares and unprepares claims on this node: the state machine behind the kubelet's calls.

Contracts:
- Each claim gets its own outcome; one bad claim never fails the others.
- Idempotent: a claim already in the checkpoint gets the recorded answer, without any API call,
  and no state is rewritten (a missing CDI spec is recreated, nothing else).
- Ordering: prepare writes the CDI spec, then the checkpoint; unprepare removes the CDI spec, then
  the checkpoint entry. A crash between leaves a state `repair()` fixes at the next start.
- Durable before acknowledged: a call answers once a group-commit save holding its changes
  returned; CDI specs are written atomically, not flushed (the start-up repair rewrites a lost
  one). A failed save rolls memory back to the last save: its calls fail, a prepare's spec goes.
- vNPUs: the record is saved first, then the vNPUs are made outside the state lock, under
  per-chip locks (app/services/vnpu), so chips work in parallel; a failure undoes spec and record.
  Unprepare destroys them (the same way) before the record goes. Shared chips: chip_sharing.
- New claims are read concurrently, under one deadline below the kubelet's 45 s (claim_fetch).
- API reads happen outside the state lock; every state change under it. An unprepare that
  overtakes a prepare of the same claim, or the kubelet gone from the call, cancels its commit
  (see inflight): a prepare the kubelet gave up on never leaves a claim prepared behind it.
- A UID is answered only for the namespace/name it was prepared under; others get an error.
- No probe under the state lock: idempotent calls use the known inventory (or fail at once where a
  spec or vNPU needs one first); a new claim probes before. A second instance:
  services/instance_state_lock.
"""

import logging
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager

from npu_dra.app.services.call_log import CallLog
from npu_dra.app.services.chip_sharing.sharing_mode import SharingModeService, SharingRepair
from npu_dra.app.services.claim_fetch import ClaimReads, Fetched, Prefetched
from npu_dra.app.services.claim_metadata import ClaimMetadata
from npu_dra.app.services.claim_transitions import ClaimTransitions
from npu_dra.app.services.group_commit import GroupCommit
from npu_dra.app.services.inflight import CancelMarks, InFlight, PendingPrepare
from npu_dra.app.services.instance_state_lock import InstanceStateLock
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.restart_repair import RepairReport, StartupRepair
from npu_dra.app.services.vnpu import VnpuService
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimUID, DriverName
from npu_dra.domain.ports import CallerGone, CdiStore, CheckpointStore, ClusterApi, MetadataFiles
from npu_dra.domain.prepare import ClaimOutcome
from npu_dra.domain.profile import DeviceProfile

log = logging.getLogger(__name__)

FETCH_DEADLINE_S = 20.0  # the kubelet's NodePrepareResources timeout is 45 s
FETCH_WORKERS = 16


class ClaimPreparer:
    def __init__(
        self,
        *,
        cluster: ClusterApi,
        cdi: CdiStore,
        checkpoints: CheckpointStore,
        inventory: InventoryCache,
        driver: DriverName,
        profile: DeviceProfile,
        fetch_deadline_s: float = FETCH_DEADLINE_S,
        fetch_workers: int = FETCH_WORKERS,
        vnpus: VnpuService | None = None,
        prefetched: Prefetched | None = None,
        shares: SharingModeService | None = None,  # shared chips (services/chip_sharing)
        shared: AbstractContextManager[object] | None = None,  # another instance's lock, if any
        marks: CancelMarks | None = None,  # and the unprepares it tells (app/services/inflight)
        metadata: MetadataFiles | None = None,  # KEP-5304 files (app/services/claim_metadata)
    ) -> None:
        self._cdi, self._checkpoints = cdi, checkpoints
        self._shares = shares or SharingModeService()  # without one, no chip's mode is changed
        self._inventory, self._driver = inventory, driver
        self._reads = ClaimReads(
            cluster, deadline_s=fetch_deadline_s, concurrency=fetch_workers, prefetched=prefetched
        )
        self._state = GroupCommit(
            lambda checkpoint: checkpoints.save(checkpoint=checkpoint), Checkpoint()
        )
        self._loaded, self._lock = False, self._state_lock(shared)
        self._in_flight = InFlight(marks)
        self._calls = CallLog(log)
        self._vnpus = vnpus  # claims allocated vNPU devices go through it (app/services/vnpu)
        self._steps = ClaimTransitions(
            cdi=cdi, inventory=inventory, driver=driver, profile=profile, shares=self._shares,
            vnpus=vnpus, metadata=ClaimMetadata(metadata, driver),
        )  # fmt: skip
        self._specs = self._steps.specs
        self._repairs = SharingRepair(StartupRepair(
            lock=self._lock, current=self._checkpoint, reload=self._reload, cdi=cdi,
            stores=(checkpoints, cdi), specs=self._specs, inventory=inventory, vnpus=vnpus,
        ), self._shares, self.prepared, inventory.known_or_error)  # fmt: skip

    def prepare(
        self, refs: Sequence[ClaimRef], caller_gone: CallerGone | None = None
    ) -> dict[ClaimUID, ClaimOutcome]:
        if not refs:  # the liveness check's call: nothing to read or change, no lock to wait on
            return {}
        began = time.monotonic()
        with self._lock:
            known = self._checkpoint().claims
            pending = self._in_flight.open((ref.uid for ref in refs), caller_gone)
        try:
            fresh = [r for r in refs if r.uid not in known and r.uid not in pending.cancelled]
            self._inventory_for(refs, known)
            fetched = self._shares.ready(
                self._reads.fetch(fresh), self._driver, self._steps.context
            )
            with self._lock:
                before = self._checkpoint()
                outcomes, checkpoint = self._commit(refs, fetched, pending)
                written = set(checkpoint.claims) - set(before.claims)
                ticket = self._state.stage(checkpoint) if written else self._state.latest()
        finally:
            with self._lock:
                self._in_flight.close(pending)
        try:
            self._state.wait(ticket)
        except DomainError as error:
            outcomes = self._not_saved(refs, outcomes, written, error)
        else:
            outcomes = self._make_vnpus(outcomes, written, pending)
        self._calls.prepared(refs, outcomes, time.monotonic() - began)
        return outcomes

    def unprepare(self, refs: Sequence[ClaimRef]) -> dict[ClaimUID, str | None]:
        if not refs:
            return {}
        began = time.monotonic()
        released = self._release_vnpus(refs)
        self._reads.forget(refs)
        with self._lock:
            before = checkpoint = self._checkpoint()
            errors: dict[ClaimUID, str | None] = {}
            for ref in refs:
                checkpoint, errors[ref.uid] = self._steps.unprepare(ref, checkpoint, released)
            if self._vnpus is not None:
                self._vnpus.forget(released)
            ticket = self._state.latest() if checkpoint is before else self._state.stage(checkpoint)
        try:
            self._state.wait(ticket)
        except DomainError as error:
            log.warning("unprepare of %d claim(s) not saved: %s", len(refs), error)
            errors = {ref.uid: errors[ref.uid] or f"claim {ref}: {error}" for ref in refs}
        self._calls.unprepared(refs, errors, time.monotonic() - began)
        return errors

    def prepared(self) -> Checkpoint:
        with self._lock:
            return self._checkpoint()

    def repair(self) -> RepairReport:  # the start-up repair (restart_repair): all of it,
        return self._repairs.everything()

    def repair_state(self) -> RepairReport:  # before serving,
        return self._repairs.before_serving()

    def repair_hardware(self) -> RepairReport:  # and after: what needs the hardware
        return self._repairs.with_hardware()

    def _checkpoint(self) -> Checkpoint:
        """The checkpoint (holding the lock): memory is ahead of the disk, never behind."""
        if not self._loaded:
            self._state.reset(self._checkpoints.load())
            self._loaded = True
        return self._state.current

    def _state_lock(
        self, shared: AbstractContextManager[object] | None
    ) -> AbstractContextManager[object]:
        """The group commit's lock; where another instance shares the state (`shared`, its
        lock), that one too, the checkpoint read again under it and saved before it goes."""
        if shared is None:
            return self._state.lock
        return InstanceStateLock(
            self._state.lock, shared, entered=self._forget, leaving=self._state.save_staged
        )

    def _forget(self) -> None:  # another instance may have changed it: read it again when asked
        self._loaded = False

    def _reload(self) -> Checkpoint:  # read again from the store (holding the lock)
        self._loaded = False
        return self._checkpoint()

    def _commit(
        self, refs: Sequence[ClaimRef], fetched: dict[ClaimUID, Fetched], pending: PendingPrepare
    ) -> tuple[dict[ClaimUID, ClaimOutcome], Checkpoint]:
        """Outcomes, and the checkpoint with this call's claims added (holding the lock)."""
        checkpoint = self._checkpoint()
        self._in_flight.cancelled_elsewhere(pending, (r.uid for r in refs if r.uid in fetched))
        outcomes: dict[ClaimUID, ClaimOutcome] = {}
        for ref in refs:
            if ref.uid in pending.cancelled:
                log.warning("prepare %s cancelled: %s", ref, pending.cancelled[ref.uid])
                error = f"claim {ref}: {pending.cancelled[ref.uid]}; not prepared"
                outcomes[ref.uid] = ClaimOutcome(error=error)
                continue
            claim = fetched.get(ref.uid, f"claim {ref}: not prepared (was it unprepared?)")
            checkpoint, outcomes[ref.uid] = self._steps.prepare(ref, claim, checkpoint)
        return outcomes, checkpoint

    def _not_saved(
        self, refs: Sequence[ClaimRef], outcomes: dict[ClaimUID, ClaimOutcome],
        written: set[ClaimUID], error: DomainError,
    ) -> dict[ClaimUID, ClaimOutcome]:  # fmt: skip
        """The save holding this call's changes failed (rolled back): every claim gets the error;
        specs it wrote go unless the checkpoint holds them. No vNPU was made: records first."""
        log.warning("prepare of %d claim(s) not saved: %s", len(refs), error)
        with self._lock:
            self._specs.discard(written - set(self._checkpoint().claims))
            if self._vnpus is not None:
                self._vnpus.forget(written)
        ok = [ref for ref in refs if not outcomes[ref.uid].error]
        return {**outcomes, **{r.uid: ClaimOutcome(error=f"claim {r}: {error}") for r in ok}}

    def _release_vnpus(self, refs: Sequence[ClaimRef]) -> dict[ClaimUID, str | None]:
        """First cancel the prepares still waiting for these claims (here, and through the
        marks in another instance: before any vNPU of theirs is destroyed, see `_make_vnpus`);
        then destroy the recorded claims' vNPUs before their records go, outside the state lock
        (per-chip locks: app/services/vnpu), busy until `forget`: the claims, each's error."""
        with self._lock:
            for ref in refs:
                if self._in_flight.cancel(ref.uid):
                    log.info("unprepare %s: cancelled a prepare still waiting on the API", ref)
            if self._vnpus is None:
                return {}
            held = self._checkpoint().claims
            taken = self._vnpus.take(c for r in refs if (c := held.get(r.uid)) and c.ref == r)
        failed = self._vnpus.release_taken(taken, self._inventory.known_or_error)
        return {c.ref.uid: failed.get(c.ref.uid) for c in taken}

    def _make_vnpus(
        self,
        outcomes: dict[ClaimUID, ClaimOutcome],
        written: set[ClaimUID],
        pending: PendingPrepare,
    ) -> dict[ClaimUID, ClaimOutcome]:
        """Create the saved claims' vNPUs outside the state lock; a failure undoes spec, record.
        A claim the other instance unprepared meanwhile (its record and spec gone there) has
        what was made for it destroyed again, so that no vNPU outlives its claim."""
        if self._vnpus is None or not written:
            return outcomes
        failed = self._vnpus.create(written, self._inventory.known_or_error())
        self._specs.discard(failed)  # the claims are still busy: no other call touches them
        with self._lock:
            undone = self._in_flight.cancelled_since(pending, written - set(failed))
        failed |= self._vnpus.undo(undone, self._inventory.known_or_error)
        with self._lock:
            self._vnpus.forget(written)
            checkpoint = self._checkpoint()
            for uid in failed:
                checkpoint = checkpoint.without(uid)
            ticket = self._state.stage(checkpoint) if failed else self._state.latest()
        try:
            self._state.wait(ticket)
        except DomainError as error:  # the records stay: reconcile recreates their vNPUs
            log.warning("the records of failed vNPU prepares were not removed: %s", error)
        return {**outcomes, **{uid: ClaimOutcome(error=e) for uid, e in failed.items()}}

    def _inventory_for(
        self, refs: Sequence[ClaimRef], known: Mapping[ClaimUID, PreparedClaim]
    ) -> None:
        """Outside the lock, where no inventory is known yet: a new claim gets a probe; a
        checkpointed claim whose spec is lost waits for the first probe (never starts another)."""
        if self._inventory.known() is not None:
            return
        if any(ref.uid not in known for ref in refs):
            self._inventory.probed_once()
        elif any(self._specs.lost(known[ref.uid]) for ref in refs):
            self._inventory.settled()
