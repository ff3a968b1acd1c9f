"""Brings a node's prepared state back in step after a restart, in two parts.

Before serving, nothing here waits for the hardware: temp files a crash left go, the checkpoint
is read, CDI specs no checkpointed claim backs go. Checkpointed claims whose specs are all there
are served from the checkpoint at once, whatever npu-smi does; only where a spec is missing or
unreadable (the CDI dir is often tmpfs) is the first probe waited for, once, bounded by the
probe timeout, so that spec is rewritten before it is served.

What needs the hardware (recomputing every spec from the inventory, and bringing the chips'
vNPUs in step with the records) runs after serving has started, in the background
(app/services/hardware_reconcile.py), and says what it waits for when the hardware does not
answer. It reads and changes the hardware outside the state lock (the claims whose vNPUs it
recreates are busy meanwhile); only the checkpoint's reads and writes take it.
"""

import logging
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar, runtime_checkable

import attrs

from npu_dra.app.services.claim_specs import ClaimSpecs, SpecRepair
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.vnpu import VnpuService
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.ports import CdiStore

log = logging.getLogger(__name__)
T = TypeVar("T")


@runtime_checkable
class LeavesTempFiles(Protocol):
    """A file store whose writes a crash can interrupt, leaving temp files behind."""

    def remove_temp_files(self) -> tuple[str, ...]:
        """Remove them (only at start, when no write of ours is in flight); their names."""
        ...


@attrs.frozen
class RepairReport:
    rewritten: tuple[ClaimUID, ...] = ()
    removed: tuple[ClaimUID, ...] = ()
    unrepairable: tuple[str, ...] = ()
    temp_files: tuple[str, ...] = ()
    foreign: tuple[str, ...] = ()  # vNPUs no record names: reported, left as they are
    waiting: str | None = None  # why the part that needs the hardware has not (all) run
    gone: tuple[tuple[ClaimRef, str], ...] = ()  # claims whose devices are gone, and why
    unchecked: tuple[str, ...] = ()  # devices whose identity the hardware no longer tells

    def then(self, later: "RepairReport") -> "RepairReport":
        """This report, followed by a later part's (which says what still waits)."""
        return RepairReport(
            _unique(self.rewritten, later.rewritten),
            _unique(self.removed, later.removed),
            _unique(self.unrepairable, later.unrepairable),
            _unique(self.temp_files, later.temp_files),
            _unique(self.foreign, later.foreign),
            later.waiting,
            _unique(self.gone, later.gone),
            _unique(self.unchecked, later.unchecked),
        )


class StartupRepair:
    """The preparer's repairs; `lock` is its state lock, `current` and `reload` its checkpoint
    (the one in memory, or read again from the store), both called holding the lock."""

    def __init__(
        self,
        *,
        lock: AbstractContextManager[object],
        current: Callable[[], Checkpoint],
        reload: Callable[[], Checkpoint],
        cdi: CdiStore,
        stores: Sequence[object],
        specs: ClaimSpecs,
        inventory: InventoryCache,
        vnpus: VnpuService | None,
    ) -> None:
        self._lock = lock
        self._current = current
        self._reload = reload
        self._cdi = cdi
        self._stores = stores
        self._specs = specs
        self._inventory = inventory
        self._vnpus = vnpus

    def everything(self) -> RepairReport:
        """Both parts, one after the other (the hardware asked as `with_hardware` asks)."""
        with self._lock:
            temp_files, removed, _ = self._files()
        return RepairReport(removed=removed, temp_files=temp_files).then(self.with_hardware())

    def before_serving(self) -> RepairReport:
        with self._lock:
            temp_files, removed, checkpoint = self._files()
            missing = self._specs.missing(checkpoint)
        # The first probe is waited for only where the checkpoint alone cannot serve a claim.
        inventory = self._inventory.settled() if missing else self._inventory.known()
        if inventory is None:
            waiting = self._waiting()
            unrepairable = tuple(
                f"claim {checkpoint.claims[uid].ref}: its CDI spec is missing and is rewritten "
                f"once the hardware answers ({waiting})"
                for uid in missing
            )
            return RepairReport((), removed, unrepairable, temp_files, waiting=waiting)
        with self._lock:
            done = self._specs.rewrite_all(self._current())
        return RepairReport(done.rewritten, removed, done.problems, temp_files, gone=done.gone)

    def with_hardware(self) -> RepairReport:
        """Every spec recomputed, the chips' vNPUs brought in step with the records; `waiting`
        says what the hardware did not answer (nothing else is changed then)."""
        try:
            inventory = self._inventory.current()  # outside the lock: it may probe
        except DomainError as error:
            return RepairReport(waiting=f"no inventory: {error}")
        with self._lock:
            snapshot = self._current()
            specs = self._specs.rewrite_all(snapshot)
        unchecked = unchecked_identities(snapshot, inventory)
        if self._vnpus is None:
            return RepairReport(
                specs.rewritten, unrepairable=specs.problems, gone=specs.gone, unchecked=unchecked
            )
        # A gone claim's vNPUs are not made again: on another chip they would re-point it.
        survey = self._vnpus.survey(_without(snapshot, specs), inventory)  # outside the lock
        with self._lock:
            plan = self._vnpus.plan_restore(survey, _without(self._current(), specs))
        try:
            done = self._vnpus.restore(plan, inventory)  # outside the lock: npu-smi calls
        finally:
            with self._lock:
                self._vnpus.forget(plan.uids)
        return RepairReport(
            specs.rewritten,
            unrepairable=specs.problems + done.problems,
            foreign=done.foreign,
            waiting=survey.unlisted,
            gone=specs.gone,
            unchecked=unchecked,
        )

    def _files(self) -> tuple[tuple[str, ...], tuple[ClaimUID, ...], Checkpoint]:
        """Temp files removed, the checkpoint read, orphan specs removed (holding the lock)."""
        temp_files = tuple(
            name
            for store in self._stores
            if isinstance(store, LeavesTempFiles)
            for name in store.remove_temp_files()
        )
        checkpoint = self._reload()
        removed = tuple(sorted(self._cdi.claim_uids() - set(checkpoint.claims)))
        for uid in removed:
            self._cdi.remove(uid=uid)
            log.info("removed CDI spec of claim %s: not in the checkpoint", uid)
        return temp_files, removed, checkpoint

    def _waiting(self) -> str:
        problem = self._inventory.problem
        return f"no inventory: {problem}" if problem else "no inventory yet"


def log_report(report: RepairReport, prefix: str) -> None:
    """What a repair did and found, one line each (the caller logs what it waits for)."""
    if report.temp_files:
        log.info("%s removed temp files %s", prefix, list(report.temp_files))
    for problem in report.unrepairable:
        log.error("%s %s", prefix, problem)
    for vnpu in report.foreign:
        log.warning(
            "%s %s: no prepared claim holds it (an earlier install's, an operator's, or one a "
            "running container uses); left as it is, never destroyed",
            prefix, vnpu,
        )  # fmt: skip
    for ref, why in report.gone:
        log.error("%s claim %s: %s", prefix, ref, why)
    for skipped in report.unchecked:
        log.warning("%s %s", prefix, skipped)
    if report.rewritten or report.removed:
        log.info(
            "%s rewrote CDI specs of %s, removed %s",
            prefix, list(report.rewritten), list(report.removed),
        )  # fmt: skip


def unchecked_identities(checkpoint: Checkpoint, inventory: NodeInventory) -> tuple[str, ...]:
    """Each prepared chip whose identity the checkpoint recorded but the hardware does not tell
    now (no PCI address read, after a reboot say): gone_devices can check only its name, so the
    claim is served by the name alone; one line each, naming the claim, chip and identity."""
    return tuple(
        dict.fromkeys(
            f"claim {claim.ref}: chip {used.chip} was prepared as {used.identity}, but the "
            "hardware tells no PCI address for it now: identity check skipped, the claim is "
            "served by the chip's name"
            for claim in checkpoint.claims.values()
            for used in claim.devices
            if used.identity
            and (device := inventory.get(used.chip)) is not None
            and device.identity is None
        )
    )


def _without(checkpoint: Checkpoint, specs: SpecRepair) -> Checkpoint:
    gone = {ref.uid for ref, _ in specs.gone}
    return Checkpoint(claims={u: c for u, c in checkpoint.claims.items() if u not in gone})


def _unique(first: Iterable[T], second: Iterable[T]) -> tuple[T, ...]:
    return tuple(dict.fromkeys([*first, *second]))
