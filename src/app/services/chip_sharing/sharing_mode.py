"""Puts chips into their container-sharing mode before their first share is prepared (#31).

Without the mode a chip's device node serves one container at a time (adapters/hardware/
device_share.py), so a claim holding a share of a chip is prepared only once the chip is in it;
where it cannot be (a chip whose family has no such mode, npu-smi failing), that claim gets the
error and nothing of it is written. It runs outside the preparer's state lock (npu-smi takes a
second or more), and asks the hardware once per chip per process: the port is idempotent
(off -> on, on -> nothing), so a restart asks again and changes nothing. One question per chip
flies at a time, and the prepares waiting on it share its answer, a failed one for a while after
too (app/services/chip_sharing/flights.py): a hanging npu-smi costs the node one timeout, not one
per
pod. Claims already prepared are never asked for: the kubelet's repeated calls stay free of
npu-smi.

The mode is never turned off here. A reboot turns it off, so the restart repair (`restored`,
through SharingRepair) turns it on again for every chip a prepared claim holds a share of, before
containers the kubelet starts again open the chips (after a reboot that repair runs before the
plugin serves: app/services/reboot.py).

The service also holds the node's SharingPolicy (which chips are shared, in how many fixed
shares), which preparing a fixed share reads. Without hardware (tests, the simulation) no chip's
mode is changed.
"""

import functools
import logging
from collections.abc import Callable, Iterable, Mapping

import attrs

from npu_dra.app.services.chip_sharing.flights import ChipFlights
from npu_dra.app.services.claim_fetch import Fetched
from npu_dra.app.services.restart_repair import RepairReport, StartupRepair
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.chip_sharing.policy import SharingPolicy
from npu_dra.domain.chip_sharing.prepare import recorded_shared_chips, shared_chips
from npu_dra.domain.claims import ResourceClaim
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimUID, DeviceName, DriverName
from npu_dra.domain.ports import SharingMode
from npu_dra.domain.prepare import NodeContext

log = logging.getLogger(__name__)

# How long a prepare waits for its chips' answer (npu-smi's two commands, each within
# --probe-timeout, 10 s by default), and how long a failed answer is given without asking again.
WAIT_S, RETRY_AFTER_S = 20.0, 10.0


class SharingModeService:
    def __init__(
        self,
        *,
        hardware: SharingMode | None = None,
        policy: SharingPolicy | None = None,
        wait_s: float = WAIT_S,
        retry_after_s: float = RETRY_AFTER_S,
    ) -> None:
        self.policy = policy
        self._hardware = hardware
        self._flights = ChipFlights(wait_s=wait_s, retry_after_s=retry_after_s)
        self._on: set[DeviceName] = set()  # chips this process has seen in sharing mode

    def ready(
        self,
        fetched: Mapping[ClaimUID, Fetched],
        driver: DriverName,
        node: Callable[[], NodeContext],
    ) -> dict[ClaimUID, Fetched]:
        """`fetched` (new claims as read) with each claim holding shares of a chip that could
        not be put in sharing mode replaced by why: the preparer answers that claim with it.
        `node` is asked only where a claim holds shares of a chip not yet seen in the mode. A
        chip the policy does not share is never put in it: the planner refuses its shares."""
        wanted = {
            uid: chips
            for uid, claim in fetched.items()
            if isinstance(claim, ResourceClaim)
            and (chips := {c for c in shared_chips(claim.results_for(driver)) if self._shared(c)})
        }
        if not wanted or self._hardware is None:
            return dict(fetched)
        try:
            failures = self._turn_on(set().union(*wanted.values()), node().inventory)
        except DomainError as error:  # no inventory
            failures = {chip: str(error) for chips in wanted.values() for chip in chips}
        failed = {
            uid: "; ".join(failures[chip] for chip in sorted(chips) if chip in failures)
            for uid, chips in wanted.items()
        }
        return {**fetched, **{u: _failed(fetched[u], why) for u, why in failed.items() if why}}

    def _shared(self, chip: DeviceName) -> bool:
        """Whether `chip` is still to be put in sharing mode for a new share of it."""
        return chip not in self._on and self.policy is not None and self.policy.shares_chip(chip)

    def restored(
        self, report: RepairReport, checkpoint: Checkpoint, inventory: Callable[[], NodeInventory]
    ) -> RepairReport:
        """`report` of a restart repair that ran with the hardware answering, with the chips of
        every recorded share put back in sharing mode (what failed joins its problems)."""
        chips = recorded_shared_chips(checkpoint) - self._on
        if report.waiting is not None or not chips or self._hardware is None:
            return report
        try:
            failures = self._turn_on(chips, inventory())
        except DomainError as error:  # no inventory
            failures = {chip: f"{chip}: {error}" for chip in chips}
        problems = tuple(
            f"chip {chip} is not back in sharing mode, so containers of its prepared shares may "
            f"fail to start: {why}"
            for chip, why in sorted(failures.items())
        )
        return attrs.evolve(report, unrepairable=report.unrepairable + problems)

    def _turn_on(
        self, chips: Iterable[DeviceName], inventory: NodeInventory
    ) -> dict[DeviceName, str]:
        """Each chip in sharing mode; why not (the port's error, naming the chip), by chip, for
        those that could not be. A chip not on the node is left to the planner, which names it."""
        questions = {
            name: functools.partial(self._turn_on_one, chip)
            for name in chips
            if name not in self._on and (chip := inventory.get(name)) is not None
        }
        return self._flights.ask(questions) if questions else {}

    def _turn_on_one(self, chip: Device) -> None:
        assert self._hardware is not None  # ready and restored ask only with hardware
        if self._hardware.enable_device_share(device=chip):
            log.info("put %s in container-sharing mode, for the shares of it", chip.name)
        self._on.add(chip.name)


class SharingRepair:
    """A StartupRepair whose passes with the hardware also put the chips of the checkpoint's
    shares back in sharing mode (`checkpoint` and `inventory` are the preparer's)."""

    def __init__(
        self,
        repairs: StartupRepair,
        shares: SharingModeService,
        checkpoint: Callable[[], Checkpoint],
        inventory: Callable[[], NodeInventory],
    ) -> None:
        self._repairs, self._shares = repairs, shares
        self._checkpoint, self._inventory = checkpoint, inventory

    def everything(self) -> RepairReport:
        return self._restored(self._repairs.everything())

    def before_serving(self) -> RepairReport:
        return self._repairs.before_serving()

    def with_hardware(self) -> RepairReport:
        return self._restored(self._repairs.with_hardware())

    def _restored(self, report: RepairReport) -> RepairReport:
        return self._shares.restored(report, self._checkpoint(), self._inventory)


def _failed(claim: Fetched, why: str) -> str:
    """A claim's error: a share is prepared only once its chip is in sharing mode."""
    ref = claim.ref if isinstance(claim, ResourceClaim) else "?"
    return f"claim {ref}: not prepared: its share needs the chip in container-sharing mode: {why}"
