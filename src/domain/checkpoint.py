"""The record of prepared claims, kept on disk so unprepare works after the claim is deleted."""

from collections.abc import Iterator, Mapping

import attrs

from npu_dra.domain.cdi import recorded_share
from npu_dra.domain.chip_sharing.policy import share_of
from npu_dra.domain.chip_sharing.prepared import Share
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import ClaimUID, DeviceName, PoolName, RequestName
from npu_dra.domain.vnpu.instance import VnpuRecord

# The format this version writes; it reads every version from OLDEST_CHECKPOINT_VERSION on.
# 1: v0.1.0. 2: each device's identity (what it was when prepared: its PCI address or UUID),
# so that after a reboot a claim is never silently pointed at another chip.
CHECKPOINT_VERSION = 2
OLDEST_CHECKPOINT_VERSION = 1


@attrs.frozen
class PreparedDevice:
    request_names: tuple[RequestName, ...]
    pool: PoolName
    device: DeviceName
    cdi_ids: tuple[str, ...]
    admin_access: bool = False
    share_id: str | None = None
    vnpu: VnpuRecord | None = None  # a vNPU device: the vNPU made for it (recorded before creation)
    identity: str | None = None  # the device's identity when prepared (None: read from version 1)

    @property
    def chip(self) -> DeviceName:
        """The chip it uses: a fixed share device's chip, a vNPU's, else the device itself."""
        if self.vnpu is not None:
            return self.vnpu.chip
        share = share_of(self.device)
        return self.device if share is None else share[0]

    @property
    def shares_chip(self) -> bool:
        """Whether it is a share of a shared chip: a shareID, or a fixed share device."""
        return self.share_id is not None or share_of(self.device) is not None

    @property
    def share(self) -> Share:
        """What a share was given, as its CDI device's name records it (domain/cdi.py)."""
        return recorded_share(self.cdi_ids[0].partition("=")[2] if self.cdi_ids else "")


@attrs.frozen
class HeldShare:
    """One share a prepared claim holds: the claim, the device it was allocated (the chip, with
    a shareID, or a fixed share device) and what it was given."""

    claim: ClaimUID
    device: DeviceName
    share: Share


class Sharers(Mapping[DeviceName, frozenset[ClaimUID]]):
    """Which claims hold shares of each shared chip, by the chip's name (admin access excluded):
    the claims that keep another from holding the chip whole; and each share they hold
    (`held`), which prepare sums against the chip (domain/chip_sharing/budget.py)."""

    def __init__(self, held: Mapping[DeviceName, tuple[HeldShare, ...]] | None = None) -> None:
        self._held = dict(held or {})

    def held(self, chip: DeviceName) -> tuple[HeldShare, ...]:
        return self._held.get(chip, ())

    def __getitem__(self, chip: DeviceName) -> frozenset[ClaimUID]:
        return frozenset(s.claim for s in self._held[chip])

    def __iter__(self) -> Iterator[DeviceName]:
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)


@attrs.frozen
class PreparedClaim:
    ref: ClaimRef
    devices: tuple[PreparedDevice, ...]


@attrs.frozen
class Checkpoint:
    claims: Mapping[ClaimUID, PreparedClaim] = attrs.field(factory=dict)
    # The format it was read from (what is written is codec.py's choice); not part of what
    # the checkpoint holds, so two checkpoints of the same claims are equal.
    version: int = attrs.field(default=CHECKPOINT_VERSION, eq=False)

    def with_claim(self, claim: PreparedClaim) -> "Checkpoint":
        return attrs.evolve(self, claims={**self.claims, claim.ref.uid: claim})

    def without(self, uid: ClaimUID) -> "Checkpoint":
        return attrs.evolve(self, claims={k: v for k, v in self.claims.items() if k != uid})

    def holders(self) -> dict[DeviceName, ClaimUID]:
        """Which claim holds each device exclusively (admin-access ones and those with a shareID
        excluded; a fixed share device is held by one claim, so it is here by its own name)."""
        return {
            device.device: uid
            for uid, claim in self.claims.items()
            for device in claim.devices
            if not device.admin_access and device.share_id is None
        }

    def sharers(self) -> Sharers:
        """Which claims hold shares of each shared chip, and what each share was given."""
        found: dict[DeviceName, list[HeldShare]] = {}
        for uid, claim in self.claims.items():
            for device in claim.devices:
                if device.shares_chip and not device.admin_access:
                    held = HeldShare(uid, device.device, device.share)
                    found.setdefault(device.chip, []).append(held)
        return Sharers({chip: tuple(shares) for chip, shares in found.items()})

    def vnpus(self) -> dict[int, tuple[ClaimUID, VnpuRecord]]:
        """Every recorded vNPU by id, with the claim it was made for."""
        return {
            device.vnpu.vnpu_id: (uid, device.vnpu)
            for uid, claim in self.claims.items()
            for device in claim.devices
            if device.vnpu is not None
        }


def gone_devices(claim: PreparedClaim, inventory: NodeInventory) -> tuple[str, ...]:
    """Why devices of a prepared claim are not the ones it was prepared with: one gone from the
    node, or a name that is now another device (a reboot, a swap: its identity differs; a vNPU
    is its chip's). Empty when all are there, or where an identity was not recorded (version 1)
    or is not told now: then only the name can be checked."""
    found = []
    for prepared in claim.devices:
        name = prepared.chip
        device = inventory.get(name)
        if device is None:
            found.append(f"{name} is gone from this node")
        elif prepared.identity and device.identity and prepared.identity != device.identity:
            found.append(f"{name} is now {device.identity}, prepared as {prepared.identity}")
    return tuple(found)
