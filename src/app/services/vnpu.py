"""Creates and destroys the vNPUs that prepared vNPU devices are, and keeps them in step with the
checkpoint. The preparer calls in here for claims allocated vNPU devices; everything else about
preparing (CDI writes, the checkpoint's final save, idempotent answers) stays the preparer's.

Contracts:
- Record first: a claim's vNPU ids are saved in the checkpoint before `create-vnpu` runs, so a
  crash at any point leaves either nothing or a record whose vNPU `reconcile` creates (or a
  retry finds: create is idempotent for the same id and template). One claim never gets two.
- A failed create undoes what this prepare created and removes the record, then reports.
- Unprepare destroys before the record goes; a failed destroy keeps the record for a retry.
- Reconcile (at start): a vNPU on a chip offering vNPUs that no record names is destroyed; a record
  whose vNPU vanished is recreated, or reported when that fails.
"""

import contextlib
import logging
from collections.abc import Iterable

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
from npu_dra.domain.vnpu.instance import VnpuRecord
from npu_dra.domain.vnpu.layout import find_vnpu_device

log = logging.getLogger(__name__)


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
        log.info(
            "created vNPU(s) for %s: %s",
            claim.ref,
            ", ".join(f"{r.vnpu_id} ({r.template} on {r.chip})" for r in created),
        )
        return plan

    def release(self, claim: PreparedClaim, inventory: NodeInventory) -> None:
        """Destroy the claim's vNPUs (idempotent); DomainError leaves them to a retry."""
        for record in _records(claim):
            self._table.destroy(device=_chip(inventory, record), vnpu_id=record.vnpu_id)
            log.info("destroyed vNPU %d of %s", record.vnpu_id, claim.ref)

    def spec(self, claim: PreparedClaim, node: NodeContext) -> CdiSpec:
        return vnpu_cdi_spec(claim.ref.uid, handed_from_record(claim, node), node)

    def reconcile(self, checkpoint: Checkpoint, inventory: NodeInventory) -> tuple[str, ...]:
        """Make the chips' vNPUs what the checkpoint records; the problems left, one per line."""
        recorded = checkpoint.vnpus()
        problems: list[str] = []
        listed: set[int] = set()
        for chip in _vnpu_chips(inventory):
            for vnpu in self._table.vnpus(device=chip):
                listed.add(vnpu.vnpu_id)
                if vnpu.vnpu_id not in recorded:
                    self._table.destroy(device=chip, vnpu_id=vnpu.vnpu_id)
                    log.warning(
                        "destroyed vNPU %d on %s: no claim holds it", vnpu.vnpu_id, chip.name
                    )
        for vnpu_id, (uid, record) in sorted(recorded.items()):
            if vnpu_id in listed:
                continue
            try:
                self._table.create(
                    device=_chip(inventory, record), template=record.template, vnpu_id=vnpu_id
                )
                log.warning("recreated vNPU %d of claim %s: it had vanished", vnpu_id, uid)
            except DomainError as error:
                problems.append(
                    f"claim {uid}: vNPU {vnpu_id} vanished and was not recreated: {error}"
                )
                log.error("%s", problems[-1])
        return tuple(problems)

    def _listed_ids(self, inventory: NodeInventory, chips: Iterable[DeviceName]) -> set[int]:
        found = (inventory.get(name) for name in chips)
        return {v.vnpu_id for chip in found if chip for v in self._table.vnpus(device=chip)}

    def _undo(
        self, inventory: NodeInventory, created: list[VnpuRecord], checkpoint: Checkpoint
    ) -> None:
        for record in created:
            with contextlib.suppress(DomainError):  # reconcile destroys what stays
                self._table.destroy(device=_chip(inventory, record), vnpu_id=record.vnpu_id)
        self._checkpoints.save(checkpoint=checkpoint)


def _records(claim: PreparedClaim) -> list[VnpuRecord]:
    return [d.vnpu for d in claim.devices if d.vnpu is not None]


def _chip(inventory: NodeInventory, record: VnpuRecord) -> Device:
    chip = inventory.get(record.chip)
    if chip is None:
        raise PrepareError(f"vNPU {record.vnpu_id}: chip {record.chip} is no longer on this node")
    return chip


def _vnpu_chips(inventory: NodeInventory) -> list[Device]:
    return [d for d in inventory.devices if d.name in inventory.vnpu_offers]


def vnpu_service_for(table: VnpuTable | None, checkpoints: CheckpointStore) -> VnpuService | None:
    return None if table is None else VnpuService(table=table, checkpoints=checkpoints)
