"""Keeps each prepared claim's CDI spec in step with the checkpoint.

The checkpoint is the record; a claim's CDI spec is derived from it. Computing the spec from a
recorded claim is deterministic and free of side effects, so a spec that is missing, damaged or
stale (the CDI directory is often tmpfs, empty after a reboot) is recomputed and rewritten rather
than trusted. Only a spec that differs from the recomputed one is written.

Recomputing needs the node's inventory (the hardware's answer); finding which specs are missing
does not, so a start whose specs are all there serves before the hardware has answered.

A claim whose device is gone, or whose device's name is now another device (its identity, from
the checkpoint, differs: a reboot, a swap), gets no spec: one it has is removed, so a container
started again fails on the missing CDI device instead of getting a chip nobody allocated to it.
"""

import logging
from collections.abc import Callable, Iterable

import attrs

from npu_dra.app.services.claim_metadata import ClaimMetadata
from npu_dra.app.services.vnpu import VnpuService
from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim, gone_devices
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import DeviceGone, DomainError
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.ports import CdiStore
from npu_dra.domain.prepare import NodeContext, recorded_spec

log = logging.getLogger(__name__)


@attrs.frozen
class SpecRepair:
    """What `rewrite_all` did: specs rewritten, claims it could not compute a spec for, and the
    claims whose devices are gone (each with why; their specs removed)."""

    rewritten: tuple[ClaimUID, ...] = ()
    problems: tuple[str, ...] = ()
    gone: tuple[tuple[ClaimRef, str], ...] = ()


class ClaimSpecs:
    def __init__(
        self,
        *,
        cdi: CdiStore,
        context: Callable[[], NodeContext],
        vnpus: VnpuService | None = None,
        metadata: ClaimMetadata | None = None,  # each spec mounts its claim's metadata files
    ) -> None:
        self._cdi = cdi
        self._context = context
        self._vnpus = vnpus
        self._metadata = metadata

    def ensure(self, claim: PreparedClaim) -> None:
        """Recreate the spec of a recorded claim if it is missing or unreadable; PrepareError
        while another call is still creating its vNPUs (the record is there, they may not be)."""
        if self._vnpus is not None:
            self._vnpus.busy(claim)
        if self.lost(claim):  # nothing readable there: write without reading it again
            self._write(claim, self._spec_of(claim))

    def discard(self, uids: Iterable[ClaimUID]) -> None:
        """Remove the specs of claims whose prepare is undone; a failure is logged, not raised."""
        uids = tuple(uids)
        for uid in uids:
            try:
                self._cdi.remove(uid=uid)
            except DomainError as error:
                log.warning("cannot remove the CDI spec of claim %s: %s", uid, error)
        if self._metadata is not None:
            self._metadata.discard(uids)

    def lost(self, claim: PreparedClaim) -> bool:
        """Whether a recorded claim's spec is missing or unreadable (no hardware asked)."""
        return bool(claim.devices) and self._missing(claim.ref.uid)

    def missing(self, checkpoint: Checkpoint) -> tuple[ClaimUID, ...]:
        """The checkpointed claims whose spec is lost."""
        return tuple(uid for uid, claim in sorted(checkpoint.claims.items()) if self.lost(claim))

    def rewrite_all(self, checkpoint: Checkpoint) -> SpecRepair:
        """Bring every checkpointed claim's spec in step (one claim failing does not stop the
        others): see SpecRepair."""
        rewritten: list[ClaimUID] = []
        problems: list[str] = []
        gone: list[tuple[ClaimRef, str]] = []
        for uid, claim in sorted(checkpoint.claims.items()):
            try:
                if claim.devices and self.rewrite(claim):
                    rewritten.append(uid)
            except DeviceGone as error:
                self.discard([uid])
                gone.append((claim.ref, str(error)))
            except DomainError as error:
                problems.append(f"claim {claim.ref}: {error}")
                log.error("cannot repair CDI spec of %s: %s", claim.ref, error)
        return SpecRepair(tuple(rewritten), tuple(problems), tuple(gone))

    def rewrite(self, claim: PreparedClaim) -> bool:
        """Recompute the spec from the checkpoint and write it if it differs; True if written."""
        spec = self._spec_of(claim)
        try:
            current = self._cdi.read(uid=claim.ref.uid)
        except DomainError:
            current = None
        if current == spec:
            return False
        self._write(claim, spec)
        return True

    def _write(self, claim: PreparedClaim, spec: CdiSpec) -> None:
        self._cdi.write(uid=claim.ref.uid, spec=spec)
        log.info("rewrote CDI spec of %s", claim.ref)

    def _missing(self, uid: ClaimUID) -> bool:
        try:
            return self._cdi.read(uid=uid) is None
        except DomainError:
            return True

    def _spec_of(self, claim: PreparedClaim) -> CdiSpec:
        context = self._context()
        if gone := gone_devices(claim, context.inventory):
            raise DeviceGone(
                f"{'; '.join(gone)}: not pointed at another device; its pod keeps running "
                "without it until deleted"
            )
        if self._vnpus is not None and any(d.vnpu for d in claim.devices):
            spec = self._vnpus.spec(claim, context)
        else:
            spec = recorded_spec(claim, context)  # shares of chips included (#31)
        if self._metadata is None:
            return spec
        return self._metadata.attach(claim, spec, context.inventory)
