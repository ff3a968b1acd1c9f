"""Creates and destroys the vNPUs that prepared vNPU devices are, and keeps them in step with the
checkpoint. The preparer calls in here for claims allocated vNPU devices; everything else about
preparing (CDI writes, the checkpoint's saves, idempotent answers) stays the preparer's. The
hardware calls that create a claim's vNPUs (undone in full on a failure) and destroy them are
vnpu_calls.py's; this module plans, keeps the bookkeeping and takes the locks.

Contracts:
- Record first: the preparer plans (`prepare`, under its state lock), saves the claim's vNPU ids,
  and only then calls `create`, outside the state lock. A crash leaves either nothing or a record
  whose vNPU `reconcile` creates (or a retry finds: create is idempotent for the same id and
  template). One claim never gets two. A failed create undoes what it created; the preparer
  then removes the record. Unprepare destroys (`take`, `release_taken`) before the record goes;
  a failed destroy keeps the record for a retry.
- In parallel across chips: creates and destroys hold a lock per chip, not one per node; on one
  chip they still run one at a time. A claim whose vNPUs are being created or destroyed is
  `busy`: another prepare or unprepare of it gets an error to retry, never an answer.
- One hardware call per create and per destroy: the ids taken are the records' plus those the
  chip listed that no record named, read by the start-up survey (or the first prepare on a chip
  not surveyed) and read again only after a create on that chip failed.
- Reconcile (after a start, in the background: app/services/hardware_reconcile.py): `survey`
  lists the chips' vNPUs outside the state lock; `restore`, under it, recreates a recorded vNPU
  that vanished (or reports why it could not). A vNPU no record names (an earlier install's, an
  operator's, one a running container may use) is reported, never destroyed.

Lock order: the preparer's state lock, then chip locks in sorted chip-name order, then this
service's `_guard` (a leaf: held for dict updates only). `create` and `release_taken` run
without the state lock and never take it; `release` and `restore` run under it and take chip
locks after it. So no cycle can form.
"""

import logging
import threading
from collections.abc import Callable, Collection, Iterable

import attrs

from npu_dra.app.services.chip_locks import ChipLocks
from npu_dra.app.services.vnpu_calls import VnpuCalls, chip_of, records
from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim
from npu_dra.domain.claims import ResourceClaim
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import DomainError, PrepareError
from npu_dra.domain.ids import ClaimUID, DeviceName
from npu_dra.domain.pool import chip_layouts
from npu_dra.domain.ports import CheckpointStore, VnpuTable
from npu_dra.domain.prepare import NodeContext, PreparePlan, configured_results
from npu_dra.domain.prepare_vnpu import (
    handed_from_record,
    names_vnpu_devices,
    plan_vnpu_prepare,
    vnpu_cdi_spec,
)
from npu_dra.domain.vnpu.instance import Vnpu, VnpuRecord
from npu_dra.domain.vnpu.layout import find_vnpu_device

log = logging.getLogger(__name__)


@attrs.frozen
class VnpuSurvey:
    """What the chips hold, as listed outside the state lock against a checkpoint snapshot."""

    snapshot: Checkpoint
    listed: dict[int, tuple[DeviceName, Vnpu]]  # vNPU id -> its chip and what npu-smi says
    chips: frozenset[DeviceName]  # the chips listed
    unlisted: str | None = None  # the chip that could not be listed, and why (the rest waits)


@attrs.frozen
class Restoration:
    """Vanished vNPUs to recreate (id, claim, record; the claims busy meanwhile), and the
    listed vNPUs no record holds."""

    recreate: tuple[tuple[int, ClaimUID, VnpuRecord], ...]
    foreign: tuple[str, ...]

    @property
    def uids(self) -> set[ClaimUID]:
        return {uid for _, uid, _ in self.recreate}


@attrs.frozen
class Reconciled:
    problems: tuple[str, ...]  # recorded vNPUs that vanished and could not be recreated
    foreign: tuple[str, ...]  # vNPUs no record names: left as they are


class VnpuService:
    def __init__(self, *, table: VnpuTable, checkpoints: CheckpointStore) -> None:
        self._table, self._checkpoints = table, checkpoints  # the preparer saves the records
        self._calls = VnpuCalls(table)
        self._chips = ChipLocks()
        self._guard = threading.Lock()  # a leaf: for the two dicts below only
        self._foreign: dict[DeviceName, frozenset[int]] = {}  # chip -> ids no record named
        self._busy: dict[ClaimUID, PreparedClaim] = {}  # changed under the state lock only

    def claims_vnpu_devices(self, claim: ResourceClaim, node: NodeContext) -> bool:
        return names_vnpu_devices(claim, node, chip_layouts(node.inventory))

    def prepare(
        self, claim: ResourceClaim, node: NodeContext, checkpoint: Checkpoint
    ) -> PreparePlan:
        """Plan (under the caller's state lock) and mark the claim busy: the caller saves the
        record with the returned claim, then calls `create` (outside the lock) for its vNPUs."""
        layouts = chip_layouts(node.inventory)
        parents = {
            p.parent
            for r in configured_results(claim, node.driver)  # ConfigError first, as plan_prepare
            if (p := find_vnpu_device(layouts, r.device)) is not None
        }
        taken = set(checkpoint.vnpus()) | self._foreign_ids(node.inventory, parents, checkpoint)
        plan = plan_vnpu_prepare(
            claim, node, layouts, holders=checkpoint.holders(), taken=sorted(taken)
        )
        with self._guard:
            self._busy[claim.ref.uid] = plan.claim
        return plan

    def create(self, uids: Collection[ClaimUID], inventory: NodeInventory) -> dict[ClaimUID, str]:
        """Create the vNPUs of the recorded claims among `uids` (outside the state lock), each
        claim under its chips' locks; the errors of those that failed (their vNPUs undone)."""
        with self._guard:
            making = [c for uid, c in self._busy.items() if uid in uids]
        errors: dict[ClaimUID, str] = {}
        for claim in making:
            with self._chips.holding(r.chip for r in records(claim)):
                error = self._create_claim(claim, inventory)
            if error is not None:
                errors[claim.ref.uid] = error
        return errors

    def undo(
        self, uids: Collection[ClaimUID], inventory: Callable[[], NodeInventory]
    ) -> dict[ClaimUID, str]:
        """Destroy the vNPUs just made for these busy claims (unprepared meanwhile through
        another instance); each claim's answer, an error either way."""
        with self._guard:
            made = [c for uid, c in self._busy.items() if uid in uids]
        errors = self.release_taken(made, inventory)
        why = "unprepared through the other plugin instance while its vNPUs were made"
        return {c.ref.uid: errors.get(c.ref.uid) or f"claim {c.ref}: {why}" for c in made}

    def forget(self, uids: Iterable[ClaimUID]) -> None:
        """The claims are no longer busy: created, or their record was never saved or removed."""
        with self._guard:
            for uid in uids:
                self._busy.pop(uid, None)

    def busy(self, claim: PreparedClaim) -> None:
        """PrepareError while another call is creating or destroying the claim's vNPUs."""
        with self._guard:
            if claim.ref.uid in self._busy:
                why = "another call is creating or destroying its vNPUs; retry"
                raise PrepareError(f"claim {claim.ref}: {why}")

    def take(self, claims: Iterable[PreparedClaim]) -> list[PreparedClaim]:
        """Those of `claims` that hold vNPUs no other call is busy with, now busy (the caller
        holds the state lock; `release_taken` then runs without it, `forget` ends it)."""
        with self._guard:
            taken = [c for c in claims if records(c) and c.ref.uid not in self._busy]
            self._busy.update((c.ref.uid, c) for c in taken)
        return taken

    def release_taken(
        self, claims: Iterable[PreparedClaim], inventory: Callable[[], NodeInventory]
    ) -> dict[ClaimUID, str]:
        """Destroy the taken claims' vNPUs, each under its chips' locks; the errors by claim."""
        errors: dict[ClaimUID, str] = {}
        for claim in claims:
            try:
                self._destroy(claim, inventory)
            except DomainError as error:
                log.warning("unprepare %s failed: %s", claim.ref, error)
                errors[claim.ref.uid] = f"claim {claim.ref}: {error}"
        return errors

    def release(self, claim: PreparedClaim, inventory: Callable[[], NodeInventory]) -> None:
        """Destroy the claim's vNPUs, if any (idempotent); DomainError leaves them to a retry."""
        self.busy(claim)
        self._destroy(claim, inventory)

    def spec(self, claim: PreparedClaim, node: NodeContext) -> CdiSpec:
        return vnpu_cdi_spec(claim.ref.uid, handed_from_record(claim, node), node)

    def survey(self, checkpoint: Checkpoint, inventory: NodeInventory) -> VnpuSurvey:
        """List the vNPUs of every chip that has or may have some (no lock needed: it only
        reads). Stops at the first chip that cannot be listed: a hung npu-smi costs one timeout."""
        listed: dict[int, tuple[DeviceName, Vnpu]] = {}
        chips: set[DeviceName] = set()
        for chip in self._chips_to_survey(checkpoint, inventory):
            try:
                vnpus = self._table.vnpus(device=chip)
            except DomainError as error:
                why = f"cannot list the vNPUs of {chip.name}: {error}"
                return VnpuSurvey(checkpoint, listed, frozenset(chips), why)
            chips.add(chip.name)
            listed |= {v.vnpu_id: (chip.name, v) for v in vnpus}
        return VnpuSurvey(checkpoint, listed, frozenset(chips))

    def plan_restore(self, survey: VnpuSurvey, checkpoint: Checkpoint) -> Restoration:
        """Under the state lock, `checkpoint` the current one: each vNPU recorded both then and
        now whose chip was listed without it, its claim now busy (`restore` recreates them
        outside the lock, `forget` ends it); the listed ones no record holds are named."""
        then, now = survey.snapshot.vnpus(), checkpoint.vnpus()
        wanted: list[tuple[int, ClaimUID, VnpuRecord]] = []
        for vnpu_id, (uid, record) in sorted(now.items()):
            skip = vnpu_id in survey.listed or vnpu_id not in then or uid in self._busy
            if skip or record.chip not in survey.chips:  # busy: a call is making or destroying it
                continue  # there; recorded since the survey (being made); or its chip unlisted
            wanted.append((vnpu_id, uid, record))
        others = {i: v for i, v in survey.listed.items() if i not in then and i not in now}
        with self._guard:  # the table is known now: later prepares list nothing
            self._busy.update((uid, checkpoint.claims[uid]) for _, uid, _ in wanted)
            for chip in survey.chips:
                self._foreign[chip] = frozenset(i for i, (c, _) in others.items() if c == chip)
        foreign = tuple(
            f"vNPU {i} ({vnpu.template}) on {chip}" for i, (chip, vnpu) in sorted(others.items())
        )
        return Restoration(tuple(wanted), foreign)

    def restore(self, plan: Restoration, inventory: NodeInventory) -> Reconciled:
        """Recreate the planned vNPUs (outside the state lock: npu-smi calls, under their chips'
        locks); the caller then `forget`s the plan's claims under the state lock."""
        problems: list[str] = []
        for vnpu_id, uid, record in plan.recreate:
            try:
                with self._chips.holding([record.chip]):
                    self._table.create(
                        device=chip_of(inventory, record), template=record.template, vnpu_id=vnpu_id
                    )
                log.warning("recreated vNPU %d of claim %s: it had vanished", vnpu_id, uid)
            except DomainError as error:
                problems.append(
                    f"claim {uid}: vNPU {vnpu_id} vanished and was not recreated: {error}"
                )
        return Reconciled(tuple(problems), plan.foreign)

    def _destroy(self, claim: PreparedClaim, inventory: Callable[[], NodeInventory]) -> None:
        with self._chips.holding(r.chip for r in records(claim)):
            self._calls.destroy(claim, inventory)

    def _create_claim(self, claim: PreparedClaim, inventory: NodeInventory) -> str | None:
        """One hardware call per vNPU (holding its chips' locks); on a failure, undone, and the
        failing chip's vNPUs read again, so the next plan there sees what the hardware holds."""
        failed = self._calls.create(claim, inventory)
        if failed is None:
            return None
        record, error = failed
        with self._guard:  # read the chip again at its next prepare
            self._foreign.pop(record.chip, None)
        return f"claim {claim.ref}: creating its vNPU failed: {error}"

    def _chips_to_survey(self, checkpoint: Checkpoint, inventory: NodeInventory) -> list[Device]:
        """Every usable chip, and any chip a record names: not only those offering vNPUs now (a
        template-info npu-smi garbles must not hide a vNPU); on a chip without vNPUs npu-smi
        answers that it has none."""
        recorded = {record.chip for _, record in checkpoint.vnpus().values()}
        return [d for d in inventory.devices if d.health.usable or d.name in recorded]

    def _foreign_ids(
        self, inventory: NodeInventory, chips: Iterable[DeviceName], checkpoint: Checkpoint
    ) -> set[int]:
        """The ids on `chips` that no record names: listed once per chip (the start-up survey
        or here, holding the state lock), again only after a failed create there."""
        ids: set[int] = set()
        for name in chips:
            with self._guard:
                known = self._foreign.get(name)
            chip = inventory.get(name)
            if known is None and chip is not None:
                recorded = checkpoint.vnpus()
                known = frozenset(
                    v.vnpu_id for v in self._table.vnpus(device=chip) if v.vnpu_id not in recorded
                )
                with self._guard:
                    self._foreign[name] = known
            ids |= known or set()
        return ids


def vnpu_service_for(table: VnpuTable | None, checkpoints: CheckpointStore) -> VnpuService | None:
    return None if table is None else VnpuService(table=table, checkpoints=checkpoints)
