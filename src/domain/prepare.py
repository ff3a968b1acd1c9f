"""Deciding what preparing a claim means on this node. Deterministic and free of side effects, so
it can be recomputed on restart to repair a CDI spec the crash or a reboot removed.
"""

from collections.abc import Mapping

import attrs

from npu_dra.domain.cdi import CdiSpec, cdi_device_name, claim_cdi_spec, qualified_device_name
from npu_dra.domain.checkpoint import PreparedClaim, PreparedDevice
from npu_dra.domain.claims import AllocationResult, ResourceClaim
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import ClaimUID, DeviceName, DriverName, PoolName
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


def plan_prepare(
    claim: ResourceClaim, node: NodeContext, holders: Mapping[DeviceName, ClaimUID]
) -> PreparePlan:
    """Devices and CDI spec for `claim`, or PrepareError naming the first offending result.

    Only this driver's results count; a result for this driver in another pool is an error,
    because the scheduler placed the claim on another node.
    """
    if claim.allocation is None:
        raise PrepareError(f"claim {claim.ref} is not allocated")
    results = claim.results_for(node.driver)
    chosen = [_checked_device(claim, r, node, holders) for r in results]
    spec = (
        claim_cdi_spec(
            claim.ref.uid,
            chosen,
            driver=node.driver,
            profile=node.profile,
            host=node.inventory.host,
        )
        if chosen
        else None
    )
    prepared = tuple(
        _prepared(claim.ref.uid, r, d, spec) for r, d in zip(results, chosen, strict=True)
    )
    return PreparePlan(PreparedClaim(claim.ref, prepared), spec)


def _checked_device(
    claim: ResourceClaim,
    result: AllocationResult,
    node: NodeContext,
    holders: Mapping[DeviceName, ClaimUID],
) -> Device:
    where = f"claim {claim.ref}, request {result.request!r}, device {result.device!r}"
    if result.pool != node.pool:
        raise PrepareError(
            f"{where}: allocated from pool {result.pool!r}, this node is {node.pool!r}"
        )
    device = node.inventory.get(result.device)
    if device is None:
        raise PrepareError(f"{where}: no such device on node {node.inventory.node!r}")
    if not device.health.usable:
        raise PrepareError(f"{where}: device is {device.health.value}")
    holder = holders.get(device.name)
    exclusive = not result.admin_access and result.share_id is None
    if exclusive and holder is not None and holder != claim.ref.uid:
        raise PrepareError(f"{where}: already prepared for claim {holder}")
    return device


def _prepared(
    uid: ClaimUID, result: AllocationResult, device: Device, spec: CdiSpec | None
) -> PreparedDevice:
    assert spec is not None  # a device was chosen, so a spec exists
    cdi_id = qualified_device_name(spec.kind, cdi_device_name(uid, device.name))
    return PreparedDevice(
        request_names=(result.request_name,),
        pool=result.pool,
        device=device.name,
        cdi_ids=(cdi_id,),
        admin_access=result.admin_access,
        share_id=result.share_id,
        identity=device.identity,
    )
