"""What preparing a claim allocated vNPU devices means: which vNPU (template, chip, id) each
becomes, and the CDI content that hands it to containers. Pure, like plan_prepare.

The id of a claim's vNPU is chosen here, before anything exists, so it can be recorded first;
`taken` holds every id the checkpoint or the hardware already uses, so no two claims (and no
two devices of one claim) ever share one. A vNPU's node is `/dev/vdavinci<id>` on the host and
`/dev/davinci<id>` in the container, where CANN looks for it (as Ascend Docker Runtime mounts
it); the chip's shared nodes, driver files and `ASCEND_VISIBLE_DEVICES=<id>` come with it
(and the runtime ids the profile asks for: domain/profile.py).
"""

from collections.abc import Mapping, Sequence

import attrs

from npu_dra.domain.cdi import (
    CdiDevice,
    CdiSpec,
    ContainerEdits,
    DeviceNode,
    cdi_device_name,
    cdi_kind,
    device_edits,
    minimum_version,
    qualified_device_name,
    runtime_edits,
)
from npu_dra.domain.checkpoint import PreparedClaim, PreparedDevice
from npu_dra.domain.claims import AllocationResult, ResourceClaim
from npu_dra.domain.device import Device
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import ClaimUID, DeviceName
from npu_dra.domain.prepare import NodeContext, PreparePlan
from npu_dra.domain.vnpu.instance import VnpuRecord, free_id
from npu_dra.domain.vnpu.layout import ChipLayout, find_vnpu_device

VNPU_HOST_PREFIX = "vdavinci"
CONTAINER_PREFIX = "davinci"


@attrs.frozen
class Handed:
    """One allocated device as containers get it: a whole chip, or a vNPU of its parent."""

    name: DeviceName
    chip: Device
    vnpu: VnpuRecord | None = None

    @property
    def visible_id(self) -> int:
        return self.vnpu.vnpu_id if self.vnpu else self.chip.physical_id


def names_vnpu_devices(
    claim: ResourceClaim, node: NodeContext, layouts: Mapping[DeviceName, ChipLayout]
) -> bool:
    """Does the claim touch a chip that offers vNPUs (one of its vNPU devices, or the chip)?"""
    results = claim.results_for(node.driver)
    return any(r.device in layouts or find_vnpu_device(layouts, r.device) for r in results)


def plan_vnpu_prepare(
    claim: ResourceClaim,
    node: NodeContext,
    layouts: Mapping[DeviceName, ChipLayout],
    *,
    holders: Mapping[DeviceName, ClaimUID],
    taken: Sequence[int],
) -> PreparePlan:
    """Devices (with their vNPU records) and CDI spec; PrepareError naming the first problem."""
    used = set(taken)
    held_chips = {
        p.parent: uid for name, uid in holders.items() if (p := find_vnpu_device(layouts, name))
    }
    handed: list[Handed] = []
    prepared: list[PreparedDevice] = []
    for result in claim.results_for(node.driver):
        where = f"claim {claim.ref}, request {result.request!r}, device {result.device!r}"
        if result.pool != node.pool:
            raise PrepareError(f"{where}: allocated from pool {result.pool!r}, not {node.pool!r}")
        device = _handed(where, result.device, node, layouts, used)
        _check_holder(where, device, claim.ref.uid, holders, held_chips)
        if device.vnpu is not None:
            used.add(device.vnpu.vnpu_id)
        handed.append(device)
        prepared.append(_prepared(result, device))
    spec = vnpu_cdi_spec(claim.ref.uid, handed, node)
    devices = tuple(
        attrs.evolve(
            p, cdi_ids=(qualified_device_name(spec.kind, cdi_device_name(claim.ref.uid, p.device)),)
        )
        for p in prepared
    )
    return PreparePlan(PreparedClaim(claim.ref, devices), spec)


def _check_holder(
    where: str,
    device: Handed,
    uid: ClaimUID,
    holders: Mapping[DeviceName, ClaimUID],
    held_chips: Mapping[DeviceName, ClaimUID],
) -> None:
    """PrepareError when another claim holds the device, the chip of this vNPU, or (for a whole
    chip) one of its vNPUs."""
    holder = holders.get(device.name) or (
        holders.get(device.chip.name) if device.vnpu else held_chips.get(device.chip.name)
    )
    if holder is not None and holder != uid:
        raise PrepareError(f"{where}: already prepared for claim {holder}")


def _prepared(result: AllocationResult, device: Handed) -> PreparedDevice:
    """The checkpoint's record of one allocated device (its CDI id is added once the spec is)."""
    return PreparedDevice(
        request_names=(result.request_name,),
        pool=result.pool,
        device=device.name,
        cdi_ids=(),
        admin_access=result.admin_access,
        share_id=result.share_id,
        vnpu=device.vnpu,
        identity=device.chip.identity,
    )


def handed_from_record(claim: PreparedClaim, node: NodeContext) -> tuple[Handed, ...]:
    """The devices of a checkpointed claim, to recompute its spec (repair, a lost CDI file)."""
    handed = []
    for prepared in claim.devices:
        chip_name = prepared.vnpu.chip if prepared.vnpu else prepared.device
        chip = node.inventory.get(chip_name)
        if chip is None:
            raise PrepareError(f"device {chip_name} is no longer on this node")
        handed.append(Handed(prepared.device, chip, prepared.vnpu))
    return tuple(handed)


def vnpu_cdi_spec(uid: ClaimUID, handed: Sequence[Handed], node: NodeContext) -> CdiSpec:
    host, profile = node.inventory.host, node.profile
    ordered = sorted(handed, key=lambda h: h.visible_id)
    shared = runtime_edits([h.chip for h in ordered], host=host, profile=profile)
    visible = profile.visible_env([str(h.visible_id) for h in ordered])
    common = attrs.evolve(shared, env=(*visible, *shared.env))
    devices = tuple(CdiDevice(cdi_device_name(uid, h.name), _edits(h, node)) for h in ordered)
    spec = CdiSpec(cdi_kind(node.driver, profile), devices, common)
    return attrs.evolve(spec, version=minimum_version(spec))


def _edits(handed: Handed, node: NodeContext) -> ContainerEdits:
    if handed.vnpu is None:
        return device_edits(handed.chip, host=node.inventory.host, profile=node.profile)
    vnpu_id = handed.vnpu.vnpu_id
    root = node.inventory.host.dev_root.rstrip("/")
    return ContainerEdits(
        device_nodes=(
            DeviceNode(f"/dev/{CONTAINER_PREFIX}{vnpu_id}", f"{root}/{VNPU_HOST_PREFIX}{vnpu_id}"),
        )
    )


def _handed(
    where: str,
    name: DeviceName,
    node: NodeContext,
    layouts: Mapping[DeviceName, ChipLayout],
    used: set[int],
) -> Handed:
    vnpu_device = find_vnpu_device(layouts, name)
    chip = node.inventory.get(vnpu_device.parent if vnpu_device else name)
    if chip is None:
        raise PrepareError(f"{where}: no such device on node {node.inventory.node!r}")
    if not chip.health.usable:
        raise PrepareError(f"{where}: device is {chip.health.value}")
    if vnpu_device is None:
        return Handed(name, chip)
    vnpu_id = free_id(chip.physical_id, chip_name=chip.chip_name, taken=used)
    return Handed(name, chip, VnpuRecord(vnpu_id, chip.name, vnpu_device.template.name))
