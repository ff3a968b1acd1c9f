"""What the plugin tells people through Kubernetes Events, computed from what happened.

On the Node: every device whose health changed between two probes (Warning when it became
unusable, Normal when it recovered), and the hardware itself going away (npu-smi or the driver
library missing or failing) and coming back. On a ResourceClaim, a prepare that failed for a
reason its owner can act on: the allocation points at a device that is unhealthy, gone or held
by another claim, and deleting and recreating the claim (or its pod) gets a fresh allocation; or
its NpuConfig is invalid or not met (domain/npu_config.py), fixed only by recreating the claim
with a good config (a claim's spec cannot change).
Failures that are the operator's (API server down, a bug) stay in logs and metrics.
"""

import enum

import attrs

from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.metrics import error_reason

USER_FIXABLE = frozenset(
    {"device_unhealthy", "device_not_on_node", "device_in_use", "not_allocated", "bad_config"}
)
ANOTHER_DEVICE = "delete and recreate the claim (or its pod) to get another device"
FIX_CONFIG = (
    "fix the NpuConfig (in the claim, its template or its DeviceClass), then delete and "
    "recreate the claim (or its pod)"
)
MAX_NOTE = 1024  # events.k8s.io/v1 note limit


class EventType(enum.Enum):
    NORMAL = "Normal"
    WARNING = "Warning"


@attrs.frozen
class Regarding:
    kind: str  # "Node" | "ResourceClaim"
    name: str
    namespace: str = ""
    uid: str = ""
    api_version: str = "v1"


@attrs.frozen
class ClusterEvent:
    regarding: Regarding
    reason: str  # CamelCase, as Kubernetes' own
    note: str
    type: EventType = EventType.NORMAL

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What rate limiting counts as "the same event again"."""
        return (self.regarding.kind, self.regarding.namespace, self.regarding.name, self.reason)


def health_events(before: NodeInventory, after: NodeInventory) -> tuple[ClusterEvent, ...]:
    node = Regarding("Node", after.node)
    was = {d.name: d for d in before.devices}
    events = []
    for device in after.devices:
        old = was.get(device.name)
        if old is None or old.health is device.health:
            continue
        usable = device.health.usable
        events.append(
            ClusterEvent(
                node,
                "DeviceHealthy" if usable else "DeviceUnhealthy",
                f"{_describe(device)}: {old.health.value} -> {device.health.value}",
                EventType.NORMAL if usable else EventType.WARNING,
            )
        )
    return tuple(events)


def hardware_event(node: str, problem: str | None) -> ClusterEvent:
    """On the Node: the hardware stopped giving an inventory (`problem`), or gives one again."""
    regarding = Regarding("Node", node)
    if problem is None:
        return ClusterEvent(regarding, "HardwareAvailable", "the node's devices answer again")
    note = f"{problem}; the plugin reports not ready until the hardware answers"
    return ClusterEvent(regarding, "HardwareUnavailable", note[:MAX_NOTE], EventType.WARNING)


def prepare_failure_event(ref: ClaimRef, error: str) -> ClusterEvent | None:
    reason = error_reason(error)
    if reason not in USER_FIXABLE:
        return None
    claim = Regarding("ResourceClaim", ref.name, ref.namespace, ref.uid, "resource.k8s.io/v1")
    remedy = FIX_CONFIG if reason == "bad_config" else ANOTHER_DEVICE
    note = f"{error[: MAX_NOTE - len(remedy) - 2]}; {remedy}"  # the remedy survives a long error
    return ClusterEvent(claim, "PrepareFailed", note, EventType.WARNING)


def device_gone_event(ref: ClaimRef, why: str) -> ClusterEvent:
    """On a prepared claim whose device is gone, or whose device's name is now another device."""
    claim = Regarding("ResourceClaim", ref.name, ref.namespace, ref.uid, "resource.k8s.io/v1")
    note = f"{why}; delete and recreate the pod (and its claim) to get another device"
    return ClusterEvent(claim, "PreparedDeviceGone", note[:MAX_NOTE], EventType.WARNING)


def _describe(device: Device) -> str:
    return f"{device.name} ({device.chip_name}, card {device.card_id} chip {device.chip_id})"
