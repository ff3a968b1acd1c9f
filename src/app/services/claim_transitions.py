"""One claim's prepare or unprepare against a checkpoint: the preparer's steps under its state
lock (app/services/preparer.py holds the lock, reads the claims and saves what these return).

Each step takes a checkpoint and returns the next one with the claim's answer; nothing here
waits on the API server. A new claim's plan is the domain's (domain/prepare, or the vNPU
service for claims allocated vNPU devices); its CDI spec is written before the record, and an
unprepare removes the spec before the record goes.
"""

import logging
from collections.abc import Mapping

from npu_dra.app.services.chip_sharing.sharing_mode import SharingModeService
from npu_dra.app.services.claim_fetch import Fetched
from npu_dra.app.services.claim_metadata import ClaimMetadata
from npu_dra.app.services.claim_specs import ClaimSpecs
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.vnpu import VnpuService
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim
from npu_dra.domain.claims import ClaimRef, ResourceClaim
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimUID, DriverName, PoolName
from npu_dra.domain.ports import CdiStore
from npu_dra.domain.prepare import ClaimOutcome, NodeContext, PreparePlan, plan_prepare
from npu_dra.domain.profile import DeviceProfile

log = logging.getLogger(__name__)


class ClaimTransitions:
    def __init__(
        self,
        *,
        cdi: CdiStore,
        inventory: InventoryCache,
        driver: DriverName,
        profile: DeviceProfile,
        shares: SharingModeService,
        vnpus: VnpuService | None,
        metadata: ClaimMetadata | None = None,  # KEP-5304 files beside the specs
    ) -> None:
        self._cdi, self._inventory, self._vnpus = cdi, inventory, vnpus
        self._driver, self._profile, self._shares = driver, profile, shares
        self._metadata = metadata or ClaimMetadata(None, driver)
        self.specs = ClaimSpecs(cdi=cdi, context=self.context, vnpus=vnpus, metadata=self._metadata)

    def prepare(
        self, ref: ClaimRef, claim: Fetched, checkpoint: Checkpoint
    ) -> tuple[Checkpoint, ClaimOutcome]:
        recorded = checkpoint.claims.get(ref.uid)
        if recorded is not None:
            if recorded.ref != ref:
                return checkpoint, ClaimOutcome(error=other_identity(ref, recorded))
            try:
                self.specs.ensure(recorded)
            except DomainError as error:
                log.warning("prepare %s failed: %s", ref, error)
                return checkpoint, ClaimOutcome(error=f"claim {ref}: {error}")
            return checkpoint, ClaimOutcome(recorded.devices)
        if isinstance(claim, str):
            return checkpoint, ClaimOutcome(error=claim)
        try:
            plan = self._plan(claim, checkpoint)
            if plan.spec is not None:
                inventory = self._inventory.known_or_error()
                spec = self._metadata.attach(plan.claim, plan.spec, inventory)
                self._cdi.write(uid=ref.uid, spec=spec)
        except DomainError as error:
            log.warning("prepare %s failed: %s", ref, error)
            self._metadata.discard([ref.uid])
            return checkpoint, ClaimOutcome(error=str(error))
        log.debug("prepared %s: %s", ref, ", ".join(d.device for d in plan.claim.devices) or "-")
        return checkpoint.with_claim(plan.claim), ClaimOutcome(plan.claim.devices)

    def unprepare(
        self, ref: ClaimRef, checkpoint: Checkpoint, released: Mapping[ClaimUID, str | None]
    ) -> tuple[Checkpoint, str | None]:
        if released.get(ref.uid):  # its vNPUs were not destroyed: the record stays for a retry
            return checkpoint, released[ref.uid]
        recorded = checkpoint.claims.get(ref.uid)
        if recorded is not None and recorded.ref != ref:
            log.warning("unprepare %s refused: %s", ref, other_identity(ref, recorded))
            return checkpoint, other_identity(ref, recorded)
        try:
            if recorded and ref.uid not in released and self._vnpus:
                # recorded since _release_vnpus looked: the known inventory, no probe under the lock
                self._vnpus.release(recorded, self._inventory.known_or_error)
            self._cdi.remove(uid=ref.uid)
            self._metadata.remove(ref.uid)
        except DomainError as error:
            log.warning("unprepare %s failed: %s", ref, error)
            return checkpoint, f"claim {ref}: {error}"
        if recorded is None:
            return checkpoint, None
        log.debug("unprepared %s", ref)
        return checkpoint.without(ref.uid), None

    def context(self) -> NodeContext:
        inventory = self._inventory.known_or_error()
        pool = PoolName(inventory.node)
        return NodeContext(self._driver, pool, inventory, self._profile, self._shares.policy)

    def _plan(self, claim: ResourceClaim, checkpoint: Checkpoint) -> PreparePlan:
        context = self.context()
        if self._vnpus is not None and self._vnpus.claims_vnpu_devices(claim, context):
            return self._vnpus.prepare(claim, context, checkpoint)
        return plan_prepare(claim, context, checkpoint.holders(), checkpoint.sharers())


def other_identity(ref: ClaimRef, recorded: PreparedClaim) -> str:
    return (
        f"claim {ref}: UID {ref.uid} is prepared for {recorded.ref.namespace}/{recorded.ref.name}; "
        "nothing changed"
    )
