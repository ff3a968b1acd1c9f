"""The hardware calls that make and destroy a prepared claim's vNPUs: one call per vNPU, a
create undone in full when one of the claim's fails. The caller (app/services/vnpu.py) holds the
chips' locks around them and keeps the bookkeeping: which claims are busy, which ids are taken.
"""

import logging
from collections.abc import Callable

from npu_dra.domain.checkpoint import PreparedClaim
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import DomainError, PrepareError
from npu_dra.domain.ports import VnpuTable
from npu_dra.domain.vnpu.instance import VnpuRecord

log = logging.getLogger(__name__)


class VnpuCalls:
    def __init__(self, table: VnpuTable) -> None:
        self._table = table

    def create(
        self, claim: PreparedClaim, inventory: NodeInventory
    ) -> tuple[VnpuRecord, DomainError] | None:
        """Create the claim's vNPUs; on a failure, those created are destroyed again and the
        failing record and its error are returned."""
        created: list[VnpuRecord] = []
        for record in records(claim):
            try:
                self._table.create(
                    device=chip_of(inventory, record), template=record.template,
                    vnpu_id=record.vnpu_id,
                )  # fmt: skip
            except DomainError as error:
                self._undo(inventory, created)
                return record, error
            created.append(record)
        log.info(
            "created vNPU(s) for %s: %s",
            claim.ref,
            ", ".join(f"{r.vnpu_id} ({r.template} on {r.chip})" for r in created),
        )
        return None

    def destroy(self, claim: PreparedClaim, inventory: Callable[[], NodeInventory]) -> None:
        """Destroy the claim's vNPUs (the inventory is asked for only where there are some);
        DomainError at the first that fails (the rest stay)."""
        for record in records(claim):
            self._table.destroy(device=chip_of(inventory(), record), vnpu_id=record.vnpu_id)
            log.info("destroyed vNPU %d of %s", record.vnpu_id, claim.ref)

    def _undo(self, inventory: NodeInventory, created: list[VnpuRecord]) -> None:
        for record in created:
            try:
                self._table.destroy(device=chip_of(inventory, record), vnpu_id=record.vnpu_id)
            except DomainError as error:  # no record will name it: the reconcile only reports it
                log.error(
                    "vNPU %d on %s is left behind by a failed prepare (%s): destroy it by hand",
                    record.vnpu_id, record.chip, error,
                )  # fmt: skip


def records(claim: PreparedClaim) -> list[VnpuRecord]:
    return [d.vnpu for d in claim.devices if d.vnpu is not None]


def chip_of(inventory: NodeInventory, record: VnpuRecord) -> Device:
    chip = inventory.get(record.chip)
    if chip is None:
        raise PrepareError(f"vNPU {record.vnpu_id}: chip {record.chip} is no longer on this node")
    return chip
