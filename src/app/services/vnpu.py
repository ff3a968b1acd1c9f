"""Creates and destroys the vNPUs that prepared vNPU devices are, and keeps them in step with the
checkpoint. The preparer calls in here for claims allocated vNPU devices; everything else about
preparing (CDI writes, the checkpoint's final save, idempotent answers) stays the preparer's.

Contracts:
- Record first: a claim's vNPU ids are saved in the checkpoint before `create-vnpu` runs, so a
  crash at any point leaves either nothing or a record whose vNPU `reconcile` creates (or a
  retry finds: create is idempotent for the same id and template). One claim never gets two.
- A failed create undoes what this prepare created and removes the record, then reports.
- Unprepare destroys before the record goes; a failed destroy keeps the record for a retry.
- Reconcile (after a start, in the background: app/services/hardware_reconcile.py) in two steps:
  `survey` lists the chips' vNPUs outside the state lock; `restore`, under it, recreates a
  recorded vNPU that vanished (or reports why it could not). A vNPU no record names was not made
  by this plugin (an earlier install's, an operator's, one a running container may use): it is
  reported, never destroyed. The only vNPUs this plugin destroys are those its records name.
"""

import logging
from collections.abc import Iterable

import attrs

from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim
from npu_dra.domain.claims import ResourceClaim
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import DomainError, PrepareError
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.pool import chip_layouts
from npu_dra.domain.ports import CheckpointStore, VnpuTable
from npu_dra.domain.prepare import NodeContext, PreparePlan
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
class Reconciled:
    problems: tuple[str, ...]  # recorded vNPUs that vanished and could not be recreated
    foreign: tuple[str, ...]  # vNPUs no record names: left as they are


class VnpuService:
    def __init__(self, *, table: VnpuTable, checkpoints: CheckpointStore) -> None:
        self._table = table
        self._checkpoints = checkpoints

    def claims_vnpu_devices(self, claim: ResourceClaim, node: NodeContext) -> bool:
        return names_vnpu_devices(claim, node, chip_layouts(node.inventory))

    def prepare(
        self, claim: ResourceClaim, node: NodeContext, checkpoint: Checkpoint
    ) -> PreparePlan:
        """Plan, record, create. The caller (under its state lock) writes the CDI spec and saves
        the checkpoint with the returned claim, exactly as it would for whole chips."""
        layouts = chip_layouts(node.inventory)
        parents = {
            p.parent
            for r in claim.results_for(node.driver)
            if (p := find_vnpu_device(layouts, r.device)) is not None
        }
        taken = set(checkpoint.vnpus()) | self._listed_ids(node.inventory, parents)
        plan = plan_vnpu_prepare(
            claim, node, layouts, holders=checkpoint.holders(), taken=sorted(taken)
        )
        self._checkpoints.save(checkpoint=checkpoint.with_claim(plan.claim))
        created: list[VnpuRecord] = []
        try:
            for record in _records(plan.claim):
                self._table.create(
                    device=_chip(node.inventory, record), template=record.template,
                    vnpu_id=record.vnpu_id,
                )  # fmt: skip
                created.append(record)
        except DomainError as error:
            self._undo(node.inventory, created, checkpoint)
            raise PrepareError(f"claim {claim.ref}: creating its vNPU failed: {error}") from error
        if created:
            log.info(
                "created vNPU(s) for %s: %s",
                claim.ref,
                ", ".join(f"{r.vnpu_id} ({r.template} on {r.chip})" for r in created),
            )
        return plan

    def holds_vnpus(self, claim: PreparedClaim) -> bool:
        return bool(_records(claim))

    def release(self, claim: PreparedClaim, inventory: NodeInventory) -> None:
        """Destroy the claim's vNPUs (idempotent); DomainError leaves them to a retry."""
        for record in _records(claim):
            self._table.destroy(device=_chip(inventory, record), vnpu_id=record.vnpu_id)
            log.info("destroyed vNPU %d of %s", record.vnpu_id, claim.ref)

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

    def restore(
        self, survey: VnpuSurvey, checkpoint: Checkpoint, inventory: NodeInventory
    ) -> Reconciled:
        """Under the state lock, `checkpoint` the current one: recreate each vNPU recorded both
        then and now whose chip was listed without it; name the listed ones no record holds."""
        then, now = survey.snapshot.vnpus(), checkpoint.vnpus()
        problems: list[str] = []
        for vnpu_id, (uid, record) in sorted(now.items()):
            if vnpu_id in survey.listed or vnpu_id not in then or record.chip not in survey.chips:
                continue  # there; recorded since the survey (being made); or its chip unlisted
            try:
                self._table.create(
                    device=_chip(inventory, record), template=record.template, vnpu_id=vnpu_id
                )
                log.warning("recreated vNPU %d of claim %s: it had vanished", vnpu_id, uid)
            except DomainError as error:
                problems.append(
                    f"claim {uid}: vNPU {vnpu_id} vanished and was not recreated: {error}"
                )
        foreign = tuple(
            f"vNPU {vnpu_id} ({vnpu.template}) on {chip}"
            for vnpu_id, (chip, vnpu) in sorted(survey.listed.items())
            if vnpu_id not in then and vnpu_id not in now
        )
        return Reconciled(tuple(problems), foreign)

    def _chips_to_survey(self, checkpoint: Checkpoint, inventory: NodeInventory) -> list[Device]:
        """Every usable chip, and any chip a record names: not only those offering vNPUs now (a
        template-info npu-smi garbles must not hide a vNPU); on a chip without vNPUs npu-smi
        answers that it has none."""
        recorded = {record.chip for _, record in checkpoint.vnpus().values()}
        return [d for d in inventory.devices if d.health.usable or d.name in recorded]

    def _listed_ids(self, inventory: NodeInventory, chips: Iterable[DeviceName]) -> set[int]:
        found = (inventory.get(name) for name in chips)
        return {v.vnpu_id for chip in found if chip for v in self._table.vnpus(device=chip)}

    def _undo(
        self, inventory: NodeInventory, created: list[VnpuRecord], checkpoint: Checkpoint
    ) -> None:
        for record in created:
            try:
                self._table.destroy(device=_chip(inventory, record), vnpu_id=record.vnpu_id)
            except DomainError as error:  # no record will name it: the reconcile only reports it
                log.error(
                    "vNPU %d on %s is left behind by a failed prepare (%s): destroy it by hand",
                    record.vnpu_id, record.chip, error,
                )  # fmt: skip
        self._checkpoints.save(checkpoint=checkpoint)


def _records(claim: PreparedClaim) -> list[VnpuRecord]:
    return [d.vnpu for d in claim.devices if d.vnpu is not None]


def _chip(inventory: NodeInventory, record: VnpuRecord) -> Device:
    chip = inventory.get(record.chip)
    if chip is None:
        raise PrepareError(f"vNPU {record.vnpu_id}: chip {record.chip} is no longer on this node")
    return chip


def vnpu_service_for(table: VnpuTable | None, checkpoints: CheckpointStore) -> VnpuService | None:
    return None if table is None else VnpuService(table=table, checkpoints=checkpoints)
