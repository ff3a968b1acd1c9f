"""Ports: what the core needs from the outside world, as structural protocols.

Adapters satisfy these without inheriting from them; every port has a real adapter and an
in-memory one, and one contract suite in tests/contract runs against all of them.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.claims import ClaimRef, DeviceClass, NodePod, ResourceClaim
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.device_facts import DeviceFacts
from npu_dra.domain.events import ClusterEvent
from npu_dra.domain.ids import ClaimName, ClaimUID, DeviceClassName, DriverName, Namespace, NodeName
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.prepare import ClaimOutcome
from npu_dra.domain.vnpu.instance import Vnpu
from npu_dra.domain.vnpu.templates import VnpuOffer

# Asked once a prepare's claims are registered in flight: the kubelet left the call (it cancelled
# it, or its deadline passed), so the prepare commits nothing (app/services/inflight).
CallerGone = Callable[[], bool]


class HardwareProbe(Protocol):
    """Finds this node's devices. Raises ProbeError (an adapter error) rather than guessing."""

    def probe(self) -> NodeInventory: ...


@runtime_checkable
class FaultNotifier(Protocol):
    """Optional: hardware that announces faults as they happen, so health need not wait for the
    next re-probe."""

    def subscribe_faults(self, on_fault: Callable[[], None]) -> bool:
        """Call `on_fault` (from any thread) whenever a device's faults change; whether the
        hardware offers that (False: health is only polled)."""
        ...


class ClusterApi(Protocol):
    """The slice of the Kubernetes API a node plugin uses."""

    def publish_pool(
        self, *, node: NodeName, driver: DriverName, slices: Sequence[ResourceSlice]
    ) -> tuple[ResourceSlice, ...]:
        """Make the stored slices of (node, driver) equal `slices`; return them as stored.

        Generations are the port's job: a changed pool is rewritten under a higher generation
        and stale slices are deleted.
        """
        ...

    def list_slices(
        self, *, driver: DriverName | None = None, node: NodeName | None = None
    ) -> tuple[ResourceSlice, ...]: ...

    def get_claim(self, *, ref: ClaimRef) -> ResourceClaim:
        """The claim with this namespace/name; ClaimNotFound if absent or its UID differs."""
        ...

    def get_device_class(self, *, name: DeviceClassName) -> DeviceClass: ...


@runtime_checkable
class ClaimStatusWriter(Protocol):
    """Writes this node's entries of a claim's `status.devices` (KEP-4817)."""

    def write_device_status(
        self, *, ref: ClaimRef, driver: DriverName, node: NodeName, devices: Sequence[DeviceFacts]
    ) -> None:
        """Make this node's entries of the claim `devices` (none: remove them), leaving every
        other entry alone. NotFound where the claim is gone; ClusterUnavailable otherwise."""
        ...


class NodeDirectory(Protocol):
    """Whether the API server knows a Node (a plugin given a wrong --node-name is not ready),
    and which kubelet runs there (seamless upgrades need one that is 1.33 or newer)."""

    def node_exists(self, *, node: NodeName) -> bool: ...

    def kubelet_version(self, *, node: NodeName) -> str | None:
        """The Node's status.nodeInfo.kubeletVersion ("" while it reports none); None when the
        API server has no such Node."""
        ...


@runtime_checkable
class DeviceTaintSupport(Protocol):
    """Whether the API server keeps device taints (KEP-5055) on this node's slices."""

    def serves_device_taints(self, *, node: NodeName, driver: DriverName) -> bool:
        """Asked once at start; ClusterUnavailable if the server cannot be asked."""
        ...


@runtime_checkable
class EventRecorder(Protocol):
    """Where Kubernetes Events go (the same API server as the ClusterApi's)."""

    def record_event(self, *, event: ClusterEvent) -> None:
        """Best effort: ClusterUnavailable (or ApiRefused) if it could not be recorded."""
        ...


class Stoppable(Protocol):
    def stop(self) -> None: ...


class SliceWatcher(Protocol):
    """Tells the publisher when someone else changed or deleted this node's slices."""

    def watch_slices(
        self, *, node: NodeName, driver: DriverName, on_change: Callable[[], None]
    ) -> Stoppable:
        """Call `on_change` (from any thread) after such a change, until stopped."""
        ...


class DaemonSetWatcher(Protocol):
    """Tells the kubelet plugin whether the DaemonSet that runs it still stands: its deletion
    is an uninstall, and the plugin then outlives the pods using its devices."""

    def watch_daemonset(
        self, *, namespace: str, name: str, on_report: Callable[[bool], None]
    ) -> Stoppable:
        """Call `on_report(standing)` (from any thread), standing meaning the DaemonSet exists
        and is not being deleted: once it is known, then after each change, until stopped."""
        ...


@runtime_checkable
class NodePodSource(Protocol):
    """The pods bound to this node and the claims generated for them: what the claim prefetch
    (app/services/claim_prefetch.py) reads before the kubelet asks."""

    def watch_node_pods(
        self,
        *,
        node: NodeName,
        on_list: Callable[[Sequence[NodePod]], None],
        on_pod: Callable[[NodePod], None],
    ) -> Stoppable:
        """`on_list` with every pod bound to `node` when the watch (re)starts, then `on_pod`
        after each change (a deleted pod comes done), from any thread, until stopped."""
        ...

    def read_claim(self, *, namespace: Namespace, name: ClaimName) -> ResourceClaim:
        """The claim as stored now (owner and reservations included); NotFound if absent."""
        ...


class CdiStore(Protocol):
    """Where CDI specs live (a runtime-watched directory in production)."""

    def write(self, *, uid: ClaimUID, spec: CdiSpec) -> None:
        """Atomically create or replace the spec of claim `uid`."""
        ...

    def read(self, *, uid: ClaimUID) -> CdiSpec | None: ...

    def remove(self, *, uid: ClaimUID) -> None:
        """Remove the spec of `uid`; removing an absent spec is not an error."""
        ...

    def claim_uids(self) -> frozenset[ClaimUID]: ...


class MetadataFiles(Protocol):
    """Where claims' device metadata files (KEP-5304) live on the node: a directory per claim."""

    def write_metadata(self, *, uid: ClaimUID, files: Mapping[str, Mapping[str, Any]]) -> str:
        """Write each document at its relative path (`<request>/<driver>-metadata.json`) in the
        claim's directory, atomically; returns that directory's path on the host."""
        ...

    def remove_metadata(self, *, uid: ClaimUID) -> None:
        """Remove the claim's directory; removing an absent one is not an error."""
        ...


class StaticCdiSpecs(Protocol):
    """Where the device plugin's static CDI spec lives: one per CDI kind, naming devices, not
    claims, and replaced whole, so a runtime reading it sees the old spec or the new one."""

    def write_static(self, *, spec: CdiSpec) -> str:
        """Create or replace the spec of `spec.kind`; returns where it is (for the log)."""
        ...

    def read_static(self, *, kind: str) -> CdiSpec | None: ...


class CheckpointStore(Protocol):
    """Durable record of prepared claims; the only state NodeUnprepareResources needs."""

    def load(self) -> Checkpoint: ...

    def save(self, *, checkpoint: Checkpoint) -> None:
        """Replace the stored checkpoint atomically: a crash leaves the old or the new one."""
        ...


class NodeClaims(Protocol):
    """The kubelet RPC port (driving side): what NodePrepareResources and
    NodeUnprepareResources ask of the node. Every claim gets its own outcome."""

    def prepare(
        self, refs: Sequence[ClaimRef], caller_gone: CallerGone | None = None
    ) -> Mapping[ClaimUID, ClaimOutcome]:
        """`caller_gone`, asked once the claims are registered: the kubelet left the call (a
        prepare then commits nothing; app/services/inflight)."""
        ...

    def unprepare(self, refs: Sequence[ClaimRef]) -> Mapping[ClaimUID, str | None]:
        """An error message per claim, None where it was unprepared (or never prepared)."""
        ...


class VnpuTable(Protocol):
    """The hardware's optional vNPU capability: templates, and creating, listing and destroying
    vNPUs on a chip. A backend that cannot split chips simply has no such port."""

    def vnpu_offer(self, *, device: Device) -> VnpuOffer | None:
        """The chip's totals and templates; None when it cannot be split."""
        ...

    def vnpus(self, *, device: Device) -> tuple[Vnpu, ...]:
        """The vNPUs that exist on the chip now."""
        ...

    def create(self, *, device: Device, template: str, vnpu_id: int) -> Vnpu:
        """Create vNPU `vnpu_id` of `template` on the chip. Idempotent: if it exists with that
        template it is returned; with another template, or if the chip lacks room, raises."""
        ...

    def destroy(self, *, device: Device, vnpu_id: int) -> None:
        """Destroy the vNPU; destroying one that does not exist is not an error."""
        ...


class SharingMode(Protocol):
    """The hardware's container-sharing mode (npu-smi's `device-share`): without it a chip's
    device node serves one container at a time, so a chip is put in it before a share of it is
    prepared (app/services/chip_sharing/sharing_mode.py). Hardware that shares without a mode
    (GPUs, by
    time-slicing) has a port that changes nothing."""

    def enable_device_share(self, *, device: Device) -> bool:
        """Put the chip in sharing mode. Idempotent: True where this call turned it on, False
        where it already was (or needs none); DomainError naming the chip where it cannot be (a
        chip whose family has no such mode: the message names the family)."""
        ...
