"""Deciding what preparing a claim means on this node. Deterministic and free of side effects, so
it can be recomputed on restart to repair a CDI spec the crash or a reboot removed
(`recorded_spec`, from the checkpoint alone). Shares of chips: domain/chip_sharing/prepare.py.
"""

from collections.abc import Mapping

import attrs

from npu_dra.domain.cdi import CdiSpec, chip_use_spec, qualified_device_name
from npu_dra.domain.checkpoint import PreparedClaim, PreparedDevice
from npu_dra.domain.chip_sharing.budget import check_given_out
from npu_dra.domain.chip_sharing.policy import SharingPolicy
from npu_dra.domain.chip_sharing.prepare import (
    Sharers,
    chip_of,
    conflicting_holder,
    recorded_uses,
    result_use,
)
from npu_dra.domain.chip_sharing.prepared import ChipUse
from npu_dra.domain.claims import AllocationResult, ResourceClaim
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import ClaimUID, DeviceName, DriverName, PoolName
from npu_dra.domain.npu_config import check_claim_configs
from npu_dra.domain.profile import DeviceProfile


@attrs.frozen
class ClaimOutcome:
    """One claim's answer to the kubelet: its prepared devices, or why it could not be."""

    devices: tuple[PreparedDevice, ...] = ()
    error: str | None = None


@attrs.frozen
class PreparePlan:
    claim: PreparedClaim
    spec: CdiSpec | None


@attrs.frozen
class NodeContext:
    """Everything about this node that preparing needs."""

    driver: DriverName
    pool: PoolName
    inventory: NodeInventory
    profile: DeviceProfile
    sharing: SharingPolicy | None = None  # the chips shared, in how many fixed shares (#31)


def plan_prepare(
    claim: ResourceClaim,
    node: NodeContext,
    holders: Mapping[DeviceName, ClaimUID],
    sharers: Sharers | None = None,
) -> PreparePlan:
    """Devices and CDI spec for `claim`, or PrepareError naming the first offending result.

    Only this driver's results count; a result for this driver in another pool is an error,
    because the scheduler placed the claim on another node. `holders` and `sharers` are the
    checkpoint's (Checkpoint.holders, Checkpoint.sharers).
    """
    if claim.allocation is None:
        raise PrepareError(f"claim {claim.ref} is not allocated")
    results = configured_results(claim, node.driver)
    sharers = Sharers() if sharers is None else sharers
    chosen = [_checked_use(claim, r, node, holders, sharers) for r in results]
    counted = [use for r, use in zip(results, chosen, strict=True) if not r.admin_access]
    check_given_out(claim.ref, counted, sharers)
    spec = (
        chip_use_spec(chosen, driver=node.driver, profile=node.profile, host=node.inventory.host)
        if chosen
        else None
    )
    prepared = tuple(_prepared(r, u, spec) for r, u in zip(results, chosen, strict=True))
    return PreparePlan(PreparedClaim(claim.ref, prepared), spec)


def recorded_spec(claim: PreparedClaim, node: NodeContext) -> CdiSpec:
    """The CDI spec a recorded claim (no vNPUs) was prepared with, from its record alone;
    PrepareError for a device no longer on this node."""
    uses = recorded_uses(claim, node.inventory)
    return chip_use_spec(uses, driver=node.driver, profile=node.profile, host=node.inventory.host)


def configured_results(claim: ResourceClaim, driver: DriverName) -> tuple[AllocationResult, ...]:
    """`driver`'s results of the claim, once its NpuConfig entries decode and allow each result
    (ConfigError otherwise: domain/npu_config.py). Both planners, chips' and vNPUs', start here,
    before anything is written."""
    check_claim_configs(claim, driver)
    return claim.results_for(driver)


def _checked_use(
    claim: ResourceClaim,
    result: AllocationResult,
    node: NodeContext,
    holders: Mapping[DeviceName, ClaimUID],
    sharers: Sharers,
) -> ChipUse:
    """The chip `result` uses (a share device's chip, domain/chip_sharing/prepare.py), once it is
    here, usable and not held against it."""
    where = f"claim {claim.ref}, request {result.request!r}, device {result.device!r}"
    if result.pool != node.pool:
        raise PrepareError(
            f"{where}: allocated from pool {result.pool!r}, this node is {node.pool!r}"
        )
    device = node.inventory.get(chip_of(result.device))
    if device is None:
        raise PrepareError(f"{where}: no such device on node {node.inventory.node!r}")
    if not device.health.usable:
        raise PrepareError(f"{where}: device is {device.health.value}")
    holder = (
        None if result.admin_access else conflicting_holder(result, claim.ref.uid, holders, sharers)
    )
    if holder is not None:
        raise PrepareError(f"{where}: already prepared for claim {holder}")
    try:
        return result_use(
            claim.ref.uid, result, device, sharing=node.sharing, profile=node.profile,
            sharers=sharers,
        )  # fmt: skip
    except PrepareError as error:
        raise PrepareError(f"{where}: {error}") from None


def _prepared(result: AllocationResult, use: ChipUse, spec: CdiSpec | None) -> PreparedDevice:
    assert spec is not None  # a device was chosen, so a spec exists
    return PreparedDevice(
        request_names=(result.request_name,),
        pool=result.pool,
        device=result.device,
        cdi_ids=(qualified_device_name(spec.kind, use.cdi_name),),
        admin_access=result.admin_access,
        share_id=result.share_id,
        identity=use.chip.identity,
    )
