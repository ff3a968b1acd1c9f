"""What one node's services stand on, whichever plugin serves them: the device profile (with the
runtime ids its containers get), the state stores (on disk, or in memory for the simulation), the
device-taint policy and chip sharing it publishes with, and the metering both plugins share."""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from npu_dra.adapters.hardware.sharing_mode_choice import device_share_for
from npu_dra.app.options import Settings
from npu_dra.app.services.chip_sharing.sharing_mode import WAIT_S, SharingModeService
from npu_dra.app.services.claim_status import ClaimStatusWorker
from npu_dra.app.services.device_taints import TaintMode
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.metered import MeteredNodeClaims
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.chip_sharing.policy import SharingPolicy
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.ports import (
    CdiStore,
    CheckpointStore,
    ClaimStatusWriter,
    ClusterApi,
    HardwareProbe,
    MetadataFiles,
    NodeClaims,
    StaticCdiSpecs,
)
from npu_dra.domain.profile import DeviceProfile

if TYPE_CHECKING:
    from npu_dra.adapters.metrics.prometheus import PrometheusMetrics
    from npu_dra.app.services.chip_sharing.forms import HeldClaims, SharingForms
    from npu_dra.app.services.preparer import ClaimPreparer
    from npu_dra.domain.device_taints import TaintPolicy
    from npu_dra.domain.metrics import PluginMetrics

CHECKPOINT_FILE = "checkpoint.json"


# -- state on disk (or in memory, for the simulation) -------------------------------------------


def plugin_data_dir(settings: Settings) -> Path:
    """`<kubelet plugins dir>/<driver>`: same path inside and outside the container."""
    return settings.plugins_dir / settings.driver_name


def cdi_files(settings: Settings, profile: DeviceProfile) -> CdiStore:
    from npu_dra.adapters.cdi.files import FileCdiStore

    return FileCdiStore(settings.cdi_root, driver=settings.driver_name, cdi_class=profile.cdi_class)


def metadata_files(settings: Settings) -> MetadataFiles | None:
    """Claims' device metadata (KEP-5304) under the plugin's own directory; none in the
    simulation, whose specs would otherwise name its scratch directory (a new one each run)."""
    if settings.simulated is not None:
        return None
    from npu_dra.adapters.cdi.metadata_files import FileMetadataFiles

    return FileMetadataFiles(plugin_data_dir(settings))


def cdi_memory() -> CdiStore:
    from npu_dra.adapters.cdi.memory import MemoryCdiStore

    return MemoryCdiStore()


def checkpoint_file(settings: Settings) -> CheckpointStore:
    """The plugin's own checkpoint files: drained under the lock instances share (a lock of
    its own, taken only then; one instance alone never waits on it)."""
    from npu_dra.adapters.checkpoint.files import FileCheckpointStore
    from npu_dra.adapters.instance_lock import InstanceLock
    from npu_dra.app.kubelet_plugin.instance import LOCK_FILE

    data = plugin_data_dir(settings)
    return FileCheckpointStore(data / CHECKPOINT_FILE, drain_guard=InstanceLock(data / LOCK_FILE))


def checkpoint_memory() -> CheckpointStore:
    from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore

    return MemoryCheckpointStore()


def static_cdi_files(settings: Settings) -> StaticCdiSpecs:
    from npu_dra.adapters.cdi.static_files import FileStaticCdiSpecs

    return FileStaticCdiSpecs(settings.cdi_root)


def static_cdi_memory() -> StaticCdiSpecs:
    from npu_dra.adapters.cdi.memory import MemoryStaticCdiSpecs

    return MemoryStaticCdiSpecs()


# -- publishing and metering --------------------------------------------------------------------


def taint_policy(settings: Settings) -> "TaintPolicy | None":
    """`--device-taints auto`: taint where the server serves taints; otherwise (off, or the
    simulation) unusable devices are left out."""
    from npu_dra.domain.device_taints import parse_taint_policy

    if settings.device_taints != "auto" or settings.state != "files":
        return None
    return parse_taint_policy(settings.taint_effects)


def pool_publisher(
    settings: Settings,
    inventory: InventoryCache,
    cluster: ClusterApi,
    taint_support: object,
    consumable_support: object,
    *,
    held: "HeldClaims | None" = None,
) -> PoolPublisher:
    """The node's publisher: unhealthy devices tainted or left out (`--device-taints`), chips
    shared as `--shared-chips` says, each as the API server's answers (`consumable_support`:
    whether it keeps multi-allocatable devices) and the claims `held` allow."""
    driver = DriverName(settings.driver_name)
    return PoolPublisher(
        inventory=inventory,
        cluster=cluster,
        driver=driver,
        taints=TaintMode(policy=taint_policy(settings), support=taint_support, driver=driver),
        sharing=sharing_mode(settings, consumable_support, held),
    )


def sharing_mode(
    settings: Settings, support: object, held: "HeldClaims | None" = None
) -> "SharingForms | None":
    """`--shared-chips`, each chip as `support` (asked whether the API server serves consumable
    capacity: multi-allocatable devices) and the claims `held` allow: None where no chip is
    shared and none can be held (no checkpoint), so the API server is never asked. The
    simulation's version says whether its API server serves consumable capacity."""
    if settings.shared_chips == frozenset() and (held is None or settings.state != "files"):
        return None
    from npu_dra.app.services.chip_sharing.forms import SharingForms

    simulated = settings.simulated
    return SharingForms(
        chips=settings.shared_chips,
        shares=settings.chip_shares,
        support=support,
        driver=DriverName(settings.driver_name),
        consumable=None if simulated is None else simulated.on("DRAConsumableCapacity"),
        held=held,
    )


def device_shares(settings: Settings, hardware: HardwareProbe) -> SharingModeService:
    """What puts chips into sharing mode before their first share is prepared, and the node's
    policy (None where no chip is shared). The hardware adapter is there even when none is:
    the restart repair turns the mode on again for shares prepared before `--shared-chips`
    was cleared."""
    chips = settings.shared_chips
    policy = None if chips == frozenset() else SharingPolicy(chips, settings.chip_shares)
    mode = device_share_for(
        settings.hardware.kind, hardware, settings.npu_smi_path, timeout=settings.probe_timeout
    )
    # A prepare waits for npu-smi's two commands (each within --probe-timeout), at most WAIT_S
    # (the kubelet's 45 s must also cover the claim's read); a failure stands one timeout long.
    timeout = settings.probe_timeout
    wait_s = min(2 * timeout + 1.0, WAIT_S)
    return SharingModeService(hardware=mode, policy=policy, wait_s=wait_s, retry_after_s=timeout)


def prometheus_metrics() -> "PrometheusMetrics":
    from npu_dra.adapters.metrics.prometheus import PrometheusMetrics

    return PrometheusMetrics()


def served_metrics(
    settings: Settings, metrics: "Callable[[], PluginMetrics]"
) -> "PluginMetrics | None":
    """The series where /metrics is served (`--metrics-port`); None where nothing would ever
    read them, so no call pays for counting and the process never imports the Prometheus
    client."""
    return metrics() if settings.metrics_port >= 0 else None


def metered(inner: NodeClaims, metrics: "PluginMetrics | None") -> NodeClaims:
    return inner if metrics is None else MeteredNodeClaims(inner, metrics)


def held_api_lock(settings: Settings, api: str) -> Iterator[object]:
    """This node's API lock (adapters/api_lock), held while the plugin runs; an ApiConflict if
    the other API's plugin runs on the node. Not checked with an empty --api-lock-dir."""
    if settings.api_lock_dir is None:
        yield None
        return
    from npu_dra.adapters.api_lock import ApiLock

    owner = f"node {settings.node_name}, pod {settings.pod_uid or '-'}"
    lock = ApiLock(settings.api_lock_dir, api, owner, profile=settings.device_profile)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()


def status_worker(
    writer: object,
    preparer: "ClaimPreparer",
    inventory: InventoryCache,
    driver: DriverName,
    node: NodeName,
) -> ClaimStatusWorker | None:
    """The claim status writer (app/services/claim_status.py), where the cluster has one."""
    if not isinstance(writer, ClaimStatusWriter):
        return None
    return ClaimStatusWorker(
        writer, prepared=preparer.prepared, inventory=inventory.known, driver=driver, node=node
    )
