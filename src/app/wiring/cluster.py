"""The cluster API graph: an in-memory cluster (the simulation, tests) or the API server's client
and the adapters over it (cluster, device taints, consumable capacity, events), one connection
pool for all."""

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, cast

from npu_dra.app.options import Settings
from npu_dra.domain.ports import (
    ClaimStatusWriter,
    ClusterApi,
    DaemonSetWatcher,
    DeviceTaintSupport,
    EventRecorder,
)

if TYPE_CHECKING:
    from npu_dra.adapters.cluster.memory import MemoryCluster
    from npu_dra.app.services.chip_sharing.forms import ServesConsumableCapacity
    from npu_dra.domain.metrics import PluginMetrics

READ_GRACE_S = 1.0


def memory_cluster(settings: Settings) -> "MemoryCluster":
    """Keeping every field, or, for the simulation, what the simulated version's gates keep:
    counters (in slices of their own from 1.35) with DRAPartitionableDevices, device taints
    with DRADeviceTaints, multi-allocatable devices with DRAConsumableCapacity, as the API
    server drops a disabled field on write."""
    from npu_dra.adapters.cluster.memory import MemoryCluster

    simulated = settings.simulated
    if simulated is None:
        return MemoryCluster()
    partitionable = simulated.on("DRAPartitionableDevices")
    return MemoryCluster(
        partitionable=partitionable,
        counters_apart=partitionable and simulated.pool_counters,
        device_taints=simulated.on("DRADeviceTaints"),
        consumable=simulated.on("DRAConsumableCapacity"),
    )


def kube_api(kubeconfig: str) -> Iterator[object]:
    """The client of the API server the kubeconfig (empty: the pod's service account) names;
    its connection pool is closed on shutdown."""
    from npu_dra.adapters.cluster.kube.connect import api_client

    api = api_client(kubeconfig or None)
    try:
        yield api
    finally:
        api.close()  # type: ignore[no-untyped-call]


def kube_cluster(
    api: object, settings: Settings, metrics: "Callable[[], PluginMetrics]"
) -> ClusterApi:
    """The API adapter; where /metrics is served its retries are counted. A claim read gives up
    just after the prepare waiting for it does (--claim-fetch-timeout), so no read stuck in a
    hung server outlives its call by more than READ_GRACE_S (and the call's own deadline, not
    the read's, is what the kubelet is told)."""
    from npu_dra.adapters.cluster.kube.cluster import KubeCluster

    on_retry = None
    if settings.metrics_port >= 0:
        counted = metrics()

        def on_retry(operation: str) -> None:
            counted.api_retry(operation=operation)

    return KubeCluster(
        api,  # type: ignore[arg-type]
        read_budget_s=settings.claim_fetch_timeout + READ_GRACE_S,
        on_retry=on_retry,
    )


def kube_taint_support(api: object) -> DeviceTaintSupport:
    from npu_dra.adapters.cluster.kube.device_taints import KubeDeviceTaintSupport

    return KubeDeviceTaintSupport(api)  # type: ignore[arg-type]


def kube_consumable_support(api: object) -> "ServesConsumableCapacity":
    from npu_dra.adapters.cluster.kube.consumable_probe import KubeConsumableCapacity

    return KubeConsumableCapacity(api)  # type: ignore[arg-type]


def kube_events(api: object) -> EventRecorder:
    from npu_dra.adapters.cluster.kube.events import KubeEvents

    return KubeEvents(api)  # type: ignore[arg-type]


def kube_daemonset_watcher(api: object) -> DaemonSetWatcher:
    from npu_dra.adapters.cluster.kube.daemonset_watch import KubeDaemonSetWatcher

    return KubeDaemonSetWatcher(api)  # type: ignore[arg-type]


def kube_claim_status(api: object) -> ClaimStatusWriter:
    from npu_dra.adapters.cluster.kube.claim_status import KubeClaimStatus

    return KubeClaimStatus(api)  # type: ignore[arg-type]


def memory_claim_status(cluster: object) -> ClaimStatusWriter:
    """Over the in-memory API, or a test's stand-in that hands its calls on to one."""
    from npu_dra.adapters.cluster.memory import MemoryCluster
    from npu_dra.adapters.cluster.memory_claim_status import MemoryClaimStatus

    return MemoryClaimStatus(cast(MemoryCluster, cluster))
