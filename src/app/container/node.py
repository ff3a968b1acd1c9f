"""NodeContainer: what one node's plugin needs (the composition root's node graph: see
app/container/__init__.py)."""

from typing import TYPE_CHECKING

from dependency_injector import containers, providers

from npu_dra.app.options import Settings
from npu_dra.app.services.claim_events import ClaimFailureEvents
from npu_dra.app.services.claim_status import ClaimStatusReports
from npu_dra.app.services.event_sink import EventSink, running_sink
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer, maintained_pool
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.uninstall import Drain, UninstallGate
from npu_dra.app.services.vnpu import vnpu_service_for
from npu_dra.app.wiring.device_plugin import running_device_plugin, running_device_plugin_metrics
from npu_dra.app.wiring.hardware import (
    backend_name,
    hardware_probe,
    pool_probe,
    vnpu_layout_probe,
    vnpu_table,
)
from npu_dra.app.wiring.kubelet_plugin import (
    cancel_marks,
    instance_lock,
    prefetching_claims,
    reboot_check,
    registration_state,
    remove_dead_instances,
    running_liveness,
    running_metrics,
    running_plugin_sockets,
    this_instance,
    watched_daemonset,
)
from npu_dra.app.wiring.node import (
    cdi_files,
    cdi_memory,
    checkpoint_file,
    checkpoint_memory,
    device_shares,
    held_api_lock,
    metadata_files,
    metered,
    pool_publisher,
    prometheus_metrics,
    served_metrics,
    static_cdi_files,
    static_cdi_memory,
    status_worker,
)
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.ports import (
    ClusterApi,
    DaemonSetWatcher,
    DeviceTaintSupport,
    EventRecorder,
    NodeDirectory,
)
from npu_dra.domain.profile import node_profile

if TYPE_CHECKING:
    from npu_dra.adapters.metrics.prometheus import PrometheusMetrics


class NodeContainer(containers.DeclarativeContainer):
    settings: providers.Dependency[Settings] = providers.Dependency(instance_of=Settings)
    cluster: providers.Dependency[ClusterApi] = providers.Dependency()
    taint_support: providers.Dependency[DeviceTaintSupport] = providers.Dependency(default=cluster)
    event_recorder: providers.Dependency[EventRecorder] = providers.Dependency(default=cluster)
    consumable_support: providers.Dependency[object] = providers.Dependency(default=cluster)
    # Where the plugin's Node is looked up (kept not ready while it is missing); None: nowhere.
    node_directory: providers.Dependency[NodeDirectory | None] = providers.Dependency(
        default=providers.Object(None)
    )
    # Where the plugin's DaemonSet is watched (docs/uninstall.md); None: nowhere.
    daemonset_watcher: providers.Dependency[DaemonSetWatcher | None] = providers.Dependency(
        default=providers.Object(None)
    )
    # Where claims' status.devices are written (app/services/claim_status.py); None: nowhere.
    status_writer: providers.Dependency[object] = providers.Dependency(
        default=providers.Object(None)
    )

    profile = providers.Callable(
        node_profile,
        settings.provided.device_profile,
        settings.provided.runtime_visible_devices,
    )
    driver = providers.Callable(DriverName, settings.provided.driver_name)
    node_name = providers.Callable(NodeName, settings.provided.node_name)
    # The plugins' Prometheus series (the root's, where a root builds this node; the probe and
    # the API adapter ask for them only where /metrics is served).
    metrics: providers.Dependency["PrometheusMetrics"] = providers.Dependency(
        default=providers.Singleton(prometheus_metrics)
    )
    hardware = providers.Singleton(hardware_probe, settings, metrics.provider)
    vnpu_table = providers.Singleton(vnpu_table, settings, hardware)
    inventory = providers.Singleton(
        InventoryCache,
        probe=providers.Singleton(
            vnpu_layout_probe,
            settings,
            providers.Singleton(pool_probe, settings, hardware),
            vnpu_table,
            cluster.provider,
        ),
    )

    cdi_store = providers.Selector(
        settings.provided.state,
        files=providers.Singleton(cdi_files, settings, profile),
        memory=providers.Singleton(cdi_memory),
    )
    checkpoint_store = providers.Selector(
        settings.provided.state,
        files=providers.Singleton(checkpoint_file, settings),
        memory=providers.Singleton(checkpoint_memory),
    )
    static_cdi = providers.Selector(
        settings.provided.state,
        files=providers.Singleton(static_cdi_files, settings),
        memory=providers.Singleton(static_cdi_memory),
    )

    # Claims read as their pods are bound here (--claim-prefetch); None when off.
    claim_prefetch = providers.Resource(
        prefetching_claims, settings, cluster, node_name, driver, metrics.provider
    )
    # Which instance this plugin is on its node: its socket names, and whether another instance
    # shares its state (seamless upgrades, app/kubelet_plugin/instance.py): then the preparer's
    # state steps also hold the lock both take (app/services/instance_state_lock.py).
    instance = providers.Singleton(this_instance, settings, node_directory)
    preparer = providers.Singleton(
        ClaimPreparer,
        cluster=cluster,
        cdi=cdi_store,
        checkpoints=checkpoint_store,
        inventory=inventory,
        driver=driver,
        profile=profile,
        fetch_deadline_s=settings.provided.claim_fetch_timeout,
        vnpus=providers.Singleton(vnpu_service_for, vnpu_table, checkpoint_store),
        prefetched=claim_prefetch,
        shares=providers.Singleton(device_shares, settings, hardware),
        shared=providers.Singleton(instance_lock, settings, instance),
        marks=providers.Singleton(cancel_marks, settings, instance),
        metadata=providers.Selector(
            settings.provided.state,
            files=providers.Singleton(metadata_files, settings),
            memory=providers.Object(None),
        ),
    )
    publisher = providers.Singleton(
        pool_publisher, settings, inventory, cluster, taint_support, consumable_support,
        held=preparer,
    )  # fmt: skip
    # Built only on the plugins' paths (the simulation never asks for them).
    event_sink = providers.Singleton(EventSink, event_recorder)
    event_worker = providers.Resource(running_sink, event_sink)
    reporting_preparer = providers.Singleton(ClaimFailureEvents, preparer, event_sink)
    claim_status = providers.Singleton(
        status_worker, status_writer, preparer, inventory, driver, node_name
    )
    status_preparer = providers.Singleton(ClaimStatusReports, reporting_preparer, claim_status)
    counted = providers.Singleton(served_metrics, settings, metrics.provider)
    metered_preparer = providers.Singleton(metered, status_preparer, counted)
    maintainer = providers.Singleton(
        PoolMaintainer,
        inventory=inventory,
        publisher=publisher,
        interval_s=settings.provided.health_interval,
        metrics=counted,
        backend=providers.Callable(backend_name, hardware),
        events=event_sink,
        node=node_name,
        nodes=node_directory,
    )

    # The kubelet plugin: publishing, its two sockets on one gRPC server, liveness and metrics.
    pool_maintenance = providers.Resource(
        maintained_pool,
        maintainer=maintainer,
        watcher=cluster,
        node=node_name,
        driver=driver,
        hardware=hardware,
    )
    # One API per node: held while the plugin runs, refused if the other API's plugin does.
    dra_api_lock = providers.Resource(held_api_lock, settings, "dra")
    classic_api_lock = providers.Resource(held_api_lock, settings, "device-plugin")
    registration = providers.Singleton(registration_state)
    # Uninstalling: SIGTERM after the DaemonSet's deletion closes the gate and drains.
    uninstall_watch = providers.Resource(watched_daemonset, settings, daemonset_watcher)
    uninstall_gate = providers.Singleton(UninstallGate, metered_preparer, checkpoint_store)
    uninstall_drain = providers.Singleton(
        Drain, checkpoints=checkpoint_store, cdi=cdi_store, gate=uninstall_gate
    )
    dead_instances_removed = providers.Callable(remove_dead_instances, settings, instance)
    reboot = providers.Singleton(reboot_check, settings)
    plugin_server = providers.Resource(
        running_plugin_sockets,
        settings=settings,
        preparer=uninstall_gate,
        inventory=inventory,
        state=registration,
        instance=instance,
    )
    liveness_server = providers.Resource(
        running_liveness,
        settings=settings,
        state=registration,
        serving=plugin_server,
        maintainer=maintainer,
        instance=instance,
    )
    metrics_server = providers.Resource(
        running_metrics,
        settings=settings,
        metrics=metrics.provider,
        inventory=inventory,
        state=registration,
        checkpoints=checkpoint_store,
    )

    # The classic device plugin, every resource served and registered.
    device_plugin = providers.Resource(
        running_device_plugin,
        api_lock=classic_api_lock,
        settings=settings,
        probe=hardware,
        static_cdi=static_cdi,
        metrics=counted,
    )
    device_plugin_metrics = providers.Resource(
        running_device_plugin_metrics,
        settings=settings,
        metrics=metrics.provider,
        serving=device_plugin,
    )
