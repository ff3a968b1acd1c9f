"""Prepares and unprepares claims on this node: the state machine behind the kubelet's calls.

Contracts:
- Each claim gets its own outcome; one bad claim never fails the others.
- Idempotent: a claim already in the checkpoint gets the recorded answer and no state is
  rewritten (a missing CDI spec is recreated, nothing else).
- Ordering: prepare writes the CDI spec, then the checkpoint; unprepare removes the CDI spec, then
  the checkpoint entry. A crash between the two leaves a state `repair()` fixes at the next start.
- API reads happen before the lock; every state change happens under it.
"""

import logging
import threading
from collections.abc import Sequence

import attrs

from npu_dra.app.services.inventory import InventoryCache
from npu_dra.domain.cdi import claim_cdi_spec
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim
from npu_dra.domain.claims import ClaimRef, ResourceClaim
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimUID, DriverName, PoolName
from npu_dra.domain.ports import CdiStore, CheckpointStore, ClusterApi
from npu_dra.domain.prepare import ClaimOutcome, NodeContext, plan_prepare
from npu_dra.domain.profile import DeviceProfile

log = logging.getLogger(__name__)


@attrs.frozen
class RepairReport:
    rewritten: tuple[ClaimUID, ...]
    removed: tuple[ClaimUID, ...]
    unrepairable: tuple[str, ...]


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
    ) -> None:
        self._cluster = cluster
        self._cdi = cdi
        self._checkpoints = checkpoints
        self._inventory = inventory
        self._driver = driver
        self._profile = profile
        self._lock = threading.Lock()

    def prepare(self, refs: Sequence[ClaimRef]) -> dict[ClaimUID, ClaimOutcome]:
        fetched = {ref.uid: self._fetch(ref) for ref in refs}
        with self._lock:
            checkpoint = self._checkpoints.load()
            outcomes: dict[ClaimUID, ClaimOutcome] = {}
            for ref in refs:
                checkpoint, outcomes[ref.uid] = self._prepare_one(ref, fetched[ref.uid], checkpoint)
            return outcomes

    def unprepare(self, refs: Sequence[ClaimRef]) -> dict[ClaimUID, str | None]:
        with self._lock:
            checkpoint = self._checkpoints.load()
            errors: dict[ClaimUID, str | None] = {}
            for ref in refs:
                checkpoint, errors[ref.uid] = self._unprepare_one(ref, checkpoint)
            return errors

    def prepared(self) -> Checkpoint:
        with self._lock:
            return self._checkpoints.load()

    def repair(self) -> RepairReport:
        """At start: recreate missing or damaged CDI specs of checkpointed claims (the CDI dir
        may be tmpfs) and remove specs of claims the checkpoint does not hold."""
        with self._lock:
            checkpoint = self._checkpoints.load()
            rewritten, unrepairable = self._rewrite_specs(checkpoint)
            removed = tuple(sorted(self._cdi.claim_uids() - set(checkpoint.claims)))
            for uid in removed:
                self._cdi.remove(uid=uid)
                log.info("removed CDI spec of claim %s: not in the checkpoint", uid)
            return RepairReport(rewritten, removed, unrepairable)

    def _fetch(self, ref: ClaimRef) -> ResourceClaim | str:
        try:
            return self._cluster.get_claim(ref=ref)
        except DomainError as error:
            return f"claim {ref}: {error}"

    def _prepare_one(
        self, ref: ClaimRef, claim: ResourceClaim | str, checkpoint: Checkpoint
    ) -> tuple[Checkpoint, ClaimOutcome]:
        recorded = checkpoint.claims.get(ref.uid)
        if recorded is not None:
            try:
                self._ensure_spec(recorded)
            except DomainError as error:
                log.warning("prepare %s failed: %s", ref, error)
                return checkpoint, ClaimOutcome(error=f"claim {ref}: {error}")
            return checkpoint, ClaimOutcome(recorded.devices)
        if isinstance(claim, str):
            return checkpoint, ClaimOutcome(error=claim)
        try:
            plan = plan_prepare(claim, self._context(), checkpoint.holders())
            if plan.spec is not None:
                self._cdi.write(uid=ref.uid, spec=plan.spec)
            updated = checkpoint.with_claim(plan.claim)
            self._save_or_undo(updated, ref.uid)
        except DomainError as error:
            log.warning("prepare %s failed: %s", ref, error)
            return checkpoint, ClaimOutcome(error=str(error))
        log.info("prepared %s: %s", ref, ", ".join(d.device for d in plan.claim.devices) or "-")
        return updated, ClaimOutcome(plan.claim.devices)

    def _save_or_undo(self, updated: Checkpoint, uid: ClaimUID) -> None:
        try:
            self._checkpoints.save(checkpoint=updated)
        except DomainError:
            self._cdi.remove(uid=uid)
            raise

    def _unprepare_one(
        self, ref: ClaimRef, checkpoint: Checkpoint
    ) -> tuple[Checkpoint, str | None]:
        try:
            self._cdi.remove(uid=ref.uid)
            if ref.uid not in checkpoint.claims:
                return checkpoint, None
            updated = checkpoint.without(ref.uid)
            self._checkpoints.save(checkpoint=updated)
        except DomainError as error:
            log.warning("unprepare %s failed: %s", ref, error)
            return checkpoint, f"claim {ref}: {error}"
        log.info("unprepared %s", ref)
        return updated, None

    def _context(self) -> NodeContext:
        inventory = self._inventory.current()
        return NodeContext(self._driver, PoolName(inventory.node), inventory, self._profile)

    def _ensure_spec(self, claim: PreparedClaim) -> None:
        if claim.devices and self._cdi_missing(claim.ref.uid):
            self._rewrite(claim)

    def _cdi_missing(self, uid: ClaimUID) -> bool:
        try:
            return self._cdi.read(uid=uid) is None
        except DomainError:
            return True

    def _rewrite_specs(
        self, checkpoint: Checkpoint
    ) -> tuple[tuple[ClaimUID, ...], tuple[str, ...]]:
        rewritten: list[ClaimUID] = []
        problems: list[str] = []
        for uid, claim in sorted(checkpoint.claims.items()):
            try:
                if claim.devices and self._rewrite(claim):
                    rewritten.append(uid)
            except DomainError as error:
                problems.append(f"claim {claim.ref}: {error}")
                log.error("cannot repair CDI spec of %s: %s", claim.ref, error)
        return tuple(rewritten), tuple(problems)

    def _rewrite(self, claim: PreparedClaim) -> bool:
        """Recompute the spec from the checkpoint and write it if it differs; True if written."""
        inventory = self._inventory.current()
        devices = []
        for prepared in claim.devices:
            device = inventory.get(prepared.device)
            if device is None:
                raise DomainError(f"device {prepared.device} is no longer on this node")
            devices.append(device)
        spec = claim_cdi_spec(
            claim.ref.uid, devices, driver=self._driver, profile=self._profile, host=inventory.host
        )
        try:
            current = self._cdi.read(uid=claim.ref.uid)
        except DomainError:
            current = None
        if current == spec:
            return False
        self._cdi.write(uid=claim.ref.uid, spec=spec)
        log.info("rewrote CDI spec of %s", claim.ref)
        return True
