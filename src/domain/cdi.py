"""CDI content for a prepared claim, computed without touching the filesystem.

One transient spec per claim; device names carry the claim UID because runtimes cache specs and a
name reused across claims could inject a stale device. The version written is the minimum the
content needs (0.3.0 for env, device nodes and plain mounts), so older runtimes accept it.
"""

from collections.abc import Sequence

import attrs

from npu_dra.domain.device import Device
from npu_dra.domain.ids import ClaimUID, DriverName
from npu_dra.domain.profile import DeviceProfile

CDI_VERSION = "0.3.0"
DIGIT_NAME_VERSION = "0.5.0"  # device names may start with a digit from CDI 0.5.0 on


@attrs.frozen
class DeviceNode:
    path: str


@attrs.frozen
class Mount:
    host_path: str
    container_path: str
    options: tuple[str, ...] = ("ro", "nosuid", "nodev", "bind")


@attrs.frozen
class ContainerEdits:
    env: tuple[str, ...] = ()
    device_nodes: tuple[DeviceNode, ...] = ()
    mounts: tuple[Mount, ...] = ()


@attrs.frozen
class CdiDevice:
    name: str
    edits: ContainerEdits


@attrs.frozen
class CdiSpec:
    kind: str
    devices: tuple[CdiDevice, ...]
    edits: ContainerEdits = ContainerEdits()
    version: str = CDI_VERSION

    def qualified_name(self, device: CdiDevice) -> str:
        return f"{self.kind}={device.name}"

    def device_nodes(self) -> tuple[str, ...]:
        nodes = [n.path for n in self.edits.device_nodes]
        nodes += [n.path for d in self.devices for n in d.edits.device_nodes]
        return tuple(nodes)


def cdi_kind(driver: DriverName, profile: DeviceProfile) -> str:
    return f"k8s.{driver}/{profile.cdi_class}"


def cdi_device_name(uid: ClaimUID, device: Device) -> str:
    return f"{uid}-{device.name}"


def claim_cdi_spec(
    uid: ClaimUID, devices: Sequence[Device], *, driver: DriverName, profile: DeviceProfile
) -> CdiSpec:
    """Per-device `/dev/davinci<phy>`; the shared nodes and the visible-devices list once."""
    ordered = sorted({d.name: d for d in devices}.values(), key=lambda d: d.physical_id)
    visible = ",".join(str(d.physical_id) for d in ordered)
    common = ContainerEdits(
        env=(f"{profile.visible_devices_env}={visible}",),
        device_nodes=tuple(DeviceNode(p) for p in profile.shared_device_nodes),
    )
    cdi_devices = tuple(
        CdiDevice(
            cdi_device_name(uid, d), ContainerEdits(device_nodes=(DeviceNode(d.device_node),))
        )
        for d in ordered
    )
    return CdiSpec(cdi_kind(driver, profile), cdi_devices, common, _minimum_version(cdi_devices))


def _minimum_version(devices: tuple[CdiDevice, ...]) -> str:
    """The oldest CDI version that accepts these names (claim UIDs often start with a digit)."""
    return DIGIT_NAME_VERSION if any(d.name[:1].isdigit() for d in devices) else CDI_VERSION
