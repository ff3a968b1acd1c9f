"""The DRA kubelet plugin's servers: the DRA socket and the registration socket announcing it (one
gRPC server), the liveness port that calls them, and /metrics. Each is a resource: it starts when
first asked for and stops on shutdown."""

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from npu_dra.app.kubelet_plugin.instance import (
    LOCK_FILE,
    UNPREPARED_DIR,
    PluginInstance,
    plugin_instance,
)
from npu_dra.app.options import OptionError, Settings
from npu_dra.app.services.claim_prefetch import ClaimPrefetch
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.reboot import RebootCheck
from npu_dra.app.services.uninstall import DaemonSetFate
from npu_dra.app.wiring.node import plugin_data_dir
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.ports import (
    CheckpointStore,
    DaemonSetWatcher,
    NodeClaims,
    NodeDirectory,
    NodePodSource,
)

if TYPE_CHECKING:
    from npu_dra.adapters.cancel_marks import CancelMarks
    from npu_dra.adapters.grpc.liveness_server import LivenessServer
    from npu_dra.adapters.grpc.registration_server import RegistrationState
    from npu_dra.adapters.grpc.sockets import UnixGrpcServer
    from npu_dra.adapters.metrics.prometheus import PrometheusMetrics
    from npu_dra.app.services.maintainer import PoolMaintainer


def reboot_check(settings: Settings) -> RebootCheck:
    """Whether the node rebooted since the plugin last repaired (`--boot-id-file`)."""
    from npu_dra.adapters.boot_id import BootIds

    return RebootCheck(BootIds(settings.boot_id_file, plugin_data_dir(settings)))


def registration_state() -> "RegistrationState":
    from npu_dra.adapters.grpc.registration_server import RegistrationState

    return RegistrationState()


def this_instance(settings: Settings, nodes: NodeDirectory | None) -> PluginInstance:
    """Which instance this plugin is on its node (`--seamless-upgrade`, `--pod-uid`)."""
    node = NodeName(settings.node_name)
    version = (lambda: nodes.kubelet_version(node=node)) if nodes is not None else None
    return plugin_instance(settings.seamless_upgrade, settings.pod_uid, version)


def instance_lock(
    settings: Settings, instance: PluginInstance
) -> AbstractContextManager[object] | None:
    """The lock two instances' state changes share (`serialize.lock` in the data dir), where
    another instance may serve beside this one; None where it is alone."""
    if not instance.seamless:
        return None
    from npu_dra.adapters.instance_lock import InstanceLock

    return InstanceLock(plugin_data_dir(settings) / LOCK_FILE)


def cancel_marks(settings: Settings, instance: PluginInstance) -> "CancelMarks | None":
    """Where another instance may serve beside this one, the unprepares both tell each other
    (adapters/cancel_marks: `unprepared/` in the data dir); None where it is alone."""
    if not instance.seamless:
        return None
    from npu_dra.adapters.cancel_marks import CancelMarks

    return CancelMarks(plugin_data_dir(settings) / UNPREPARED_DIR)


def remove_dead_instances(settings: Settings, instance: PluginInstance) -> None:
    """Where instances have sockets of their own, those of instances that died (SIGKILL, power)
    and that nobody will overwrite: removed once this one serves (adapters/grpc/dead_sockets)."""
    if not instance.seamless:
        return
    from npu_dra.adapters.grpc.dead_sockets import remove_dead_sockets

    driver = settings.driver_name
    registration = [f"{driver}-*-reg.sock", f"{driver}-reg.sock"]
    own = registration_socket(settings, instance)
    remove_dead_sockets(settings.registrar_dir, registration, keep=[own])
    own = dra_socket(settings, instance)
    remove_dead_sockets(plugin_data_dir(settings), ["dra-*.sock", "dra.sock"], keep=[own])


def dra_socket(settings: Settings, instance: PluginInstance) -> Path:
    """`<kubelet plugins dir>/<driver>/dra[-<pod uid>].sock`, announced by the registration."""
    return plugin_data_dir(settings) / instance.dra_socket_name()


def registration_socket(settings: Settings, instance: PluginInstance) -> Path:
    return settings.registrar_dir / instance.registration_socket_name(settings.driver_name)


def running_plugin_sockets(
    *,
    settings: Settings,
    preparer: NodeClaims,
    inventory: InventoryCache,
    state: "RegistrationState",
    instance: PluginInstance,
) -> Iterator["UnixGrpcServer"]:
    """The DRA socket and the registration socket announcing it, on one gRPC server."""
    from npu_dra.app.kubelet_plugin.servers import serve_plugin_sockets

    yield from serve_plugin_sockets(
        dra_socket=dra_socket(settings, instance),
        registration_socket=registration_socket(settings, instance),
        driver=settings.driver_name,
        preparer=preparer,
        inventory=inventory,
        state=state,
    )


def running_liveness(
    *,
    settings: Settings,
    state: "RegistrationState",
    serving: "UnixGrpcServer",
    maintainer: "PoolMaintainer",
    instance: PluginInstance,
) -> Iterator["LivenessServer | None"]:
    from npu_dra.app.kubelet_plugin.servers import serve_liveness

    yield from serve_liveness(
        host=settings.healthcheck_host,
        port=settings.healthcheck_port,
        registration=registration_socket(settings, instance),
        dra=serving.path,
        state=state,
        readiness=maintainer.readiness_problem,
    )


def running_metrics(
    *,
    settings: Settings,
    metrics: "Callable[[], PrometheusMetrics]",
    inventory: InventoryCache,
    state: "RegistrationState",
    checkpoints: CheckpointStore,
) -> Iterator[object]:
    if settings.metrics_port < 0:  # and the Prometheus client is never imported
        yield None
        return
    from npu_dra.app.kubelet_plugin.metrics_server import serve_metrics

    yield from serve_metrics(
        metrics=metrics(),
        port=settings.metrics_port,
        host=settings.healthcheck_host,
        inventory=inventory,
        registration=state,
        checkpoints=checkpoints,
    )


def prefetching_claims(
    settings: Settings,
    cluster: object,
    node: NodeName,
    driver: DriverName,
    metrics: "Callable[[], PrometheusMetrics]",
) -> Iterator[ClaimPrefetch | None]:
    """Claims read as their pods are bound here (`--claim-prefetch`), its pod watch running
    while the plugin does; None when off."""
    if not settings.claim_prefetch:
        yield None
        return
    if not isinstance(cluster, NodePodSource):
        raise OptionError("--claim-prefetch needs --cluster=kubernetes: it watches pods there")
    prefetch = ClaimPrefetch(cluster, node=node, driver=driver)
    if settings.metrics_port >= 0:
        from npu_dra.app.kubelet_plugin.metrics_server import watch_prefetch

        watch_prefetch(metrics(), prefetch)
    watch = prefetch.watch()
    try:
        yield prefetch
    finally:
        watch.stop()


def watched_daemonset(
    settings: Settings, watcher: DaemonSetWatcher | None
) -> Iterator[DaemonSetFate | None]:
    """The fate of the DaemonSet running this plugin (`--daemonset-name`), watched from start
    so that SIGTERM knows whether it is an uninstall; None where nobody says which DaemonSet."""
    if not settings.daemonset_name or watcher is None:
        yield None
        return
    fate = DaemonSetFate(f"{settings.pod_namespace}/{settings.daemonset_name}")
    watch = watcher.watch_daemonset(
        namespace=settings.pod_namespace, name=settings.daemonset_name, on_report=fate.report
    )
    try:
        yield fate
    finally:
        watch.stop()
