"""The cluster API graph: an in-memory cluster (the simulation, tests) or the API server's client
and the adapters over it (cluster, device taints, events), one connection pool for all."""

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from npu_dra.app.options import Settings
from npu_dra.domain.ports import ClusterApi, DeviceTaintSupport, EventRecorder

if TYPE_CHECKING:
    from npu_dra.adapters.cluster.memory import MemoryCluster
    from npu_dra.domain.metrics import PluginMetrics


def memory_cluster() -> "MemoryCluster":
    from npu_dra.adapters.cluster.memory import MemoryCluster

    return MemoryCluster()


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
    """The API adapter; where /metrics is served its retries are counted."""
    from npu_dra.adapters.cluster.kube.cluster import KubeCluster

    on_retry = None
    if settings.metrics_port >= 0:
        counted = metrics()

        def on_retry(operation: str) -> None:
            counted.api_retry(operation=operation)

    return KubeCluster(api, on_retry=on_retry)  # type: ignore[arg-type]


def kube_taint_support(api: object) -> DeviceTaintSupport:
    from npu_dra.adapters.cluster.kube.device_taints import KubeDeviceTaintSupport

    return KubeDeviceTaintSupport(api)  # type: ignore[arg-type]


def kube_events(api: object) -> EventRecorder:
    from npu_dra.adapters.cluster.kube.events import KubeEvents

    return KubeEvents(api)  # type: ignore[arg-type]
