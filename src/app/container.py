"""The composition root: every object graph any `npu-dra` command runs is built here, from one
`Settings` (app/options.py).

`Container` holds what a process shares (the cluster API, the simulation's selector evaluator);
`NodeContainer` holds what one node's plugin needs: its hardware, stores and services, and the
servers each mode runs, as Resource providers that start when first asked for and stop on
`shutdown_resources()`, dependents first (the registration socket before the DRA socket it
announces). The kubelet plugin, the device plugin and `discover` use the root's `node`; the
simulation builds one `NodeContainer` per simulated node over the root's in-memory cluster.

Every adapter is imported inside the factory that builds it, so a command loads only what it
runs: `discover` never imports gRPC or the Kubernetes client, the plugins never import the CEL
runtime, and `npu-dra --help` imports none of them.
"""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from dependency_injector import containers, providers

from npu_dra.app.options import Settings
from npu_dra.app.services.claim_events import ClaimFailureEvents
from npu_dra.app.services.device_taints import TaintMode
from npu_dra.app.services.event_sink import EventSink, running_sink
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer, maintained_pool
from npu_dra.app.services.metered import MeteredNodeClaims
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.app.services.vnpu import vnpu_service_for
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.ports import (
    CdiStore,
    CheckpointStore,
    ClusterApi,
    DeviceTaintSupport,
    EventRecorder,
    HardwareProbe,
    NodeClaims,
    StaticCdiSpecs,
)
from npu_dra.domain.profile import DeviceProfile, profile_named

if TYPE_CHECKING:
    from npu_dra.adapters.cluster.memory import MemoryCluster
    from npu_dra.adapters.grpc.liveness_server import LivenessServer
    from npu_dra.adapters.grpc.registration_server import RegistrationState
    from npu_dra.adapters.grpc.sockets import UnixGrpcServer
    from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
    from npu_dra.adapters.metrics.prometheus import PrometheusMetrics
    from npu_dra.app.device_plugin.registration_supervisor import DevicePluginRuntime
    from npu_dra.domain.device_taints import TaintPolicy
    from npu_dra.domain.metrics import PluginMetrics
    from npu_dra.domain.partitions.ports import VnpuTable
    from npu_dra.domain.scheduling.ports import SelectorEvaluator

CHECKPOINT_FILE = "checkpoint.json"


# -- the cluster API ----------------------------------------------------------------------------


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


def taint_policy(settings: Settings) -> "TaintPolicy | None":
    """`--device-taints auto`: taint where the server serves taints; otherwise (off, or the
    simulation) unusable devices are left out."""
    from npu_dra.domain.device_taints import parse_taint_policy

    if settings.device_taints != "auto" or settings.state != "files":
        return None
    return parse_taint_policy(settings.taint_effects)


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


def selector_evaluator() -> "SelectorEvaluator":
    """The simulation's CEL evaluator (the plugins never evaluate selectors)."""
    from npu_dra.adapters.cel.evaluator import CelSelectorEvaluator

    return CelSelectorEvaluator()


# -- hardware -----------------------------------------------------------------------------------


def hardware_probe(
    settings: Settings, metrics: "Callable[[], PluginMetrics] | None" = None
) -> HardwareProbe:
    """The backend `--hardware` chose (app/options.py has checked it finds the profile's
    devices); a fake node description of another profile's devices is refused by its probe.
    Where /metrics is served (`--metrics-port`), each npu-smi command is timed into `metrics`."""
    from npu_dra.adapters.hardware.choose import fake_probe, nvml_probe
    from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths

    node = NodeName(settings.node_name)
    profile = settings.device_profile
    nvidia = NvidiaHostPaths(dev_root=settings.dev_root, driver_root=settings.driver_root)
    choice = settings.hardware
    if choice.kind == "fake":
        if choice.description is not None:  # a simulated node: nothing on this machine
            return fake_probe(choice.description, node=node, profile=profile)
        if choice.fake_file is None:
            raise ValueError("--hardware fake needs a node description file: fake:FILE")
        return fake_probe(
            choice.fake_file,
            node=node,
            ascend=ascend_host(settings),
            nvidia=nvidia,
            profile=profile,
        )
    if choice.kind == "nvml":
        return nvml_probe(node=node, host=nvidia, profile=profile)
    from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe

    host = ascend_host(settings)
    on_command = None
    if metrics is not None and settings.metrics_port >= 0:
        counted = metrics()

        def on_command(command: str, seconds: float, ok: bool) -> None:
            counted.hardware_command_done(command=command, seconds=seconds, ok=ok)

    return NpuSmiProbe(
        node=node,
        npu_smi=host.npu_smi,
        sysfs_root=settings.sysfs_root,
        dev_root=host.dev_root,
        timeout=settings.probe_timeout,
        ascend_root=host.ascend_root,
        dcmi_dir=host.dcmi_dir,
        install_info=host.install_info,
        on_command=on_command,
    )


def vnpu_table(settings: Settings, probe: HardwareProbe) -> "VnpuTable | None":
    """The backend's partitioning capability when `--partitions=templates` asks for it."""
    from npu_dra.adapters.hardware.sliced import vnpu_table_for

    return vnpu_table_for(settings.partitions, settings.hardware.kind, probe, settings.npu_smi_path)


def partitioned_probe(
    settings: Settings,
    probe: HardwareProbe,
    table: "VnpuTable | None",
    cluster: Callable[[], ClusterApi],
) -> HardwareProbe:
    """The probe whose inventory also holds the chips' vNPU layouts, where hardware and API
    server allow (app/services/partitions.py decides, once, and logs it). The cluster API is
    asked for only with partitions on: the first probe runs while it is being configured."""
    from npu_dra.app.services.partitions import partitioned_probe as decide

    if (settings.partitions or "none") == "none":
        return probe
    node, driver = NodeName(settings.node_name), DriverName(settings.driver_name)
    return decide(
        probe, table, mode=settings.partitions, cluster=cluster(), node=node, driver=driver
    )


def ascend_host(settings: Settings) -> "AscendHostPaths":
    from npu_dra.adapters.hardware.ascend_host import AscendHostPaths

    return AscendHostPaths(
        dev_root=settings.dev_root,
        npu_smi=settings.npu_smi_path,
        ascend_root=settings.ascend_root,
        dcmi_dir=settings.dcmi_dir,
        install_info=settings.ascend_install_info,
    )


# -- state on disk (or in memory, for the simulation) -------------------------------------------


def plugin_data_dir(settings: Settings) -> Path:
    """`<kubelet plugins dir>/<driver>`: same path inside and outside the container."""
    return settings.plugins_dir / settings.driver_name


def cdi_files(settings: Settings, profile: DeviceProfile) -> CdiStore:
    from npu_dra.adapters.cdi.files import FileCdiStore

    return FileCdiStore(settings.cdi_root, driver=settings.driver_name, cdi_class=profile.cdi_class)


def cdi_memory() -> CdiStore:
    from npu_dra.adapters.cdi.memory import MemoryCdiStore

    return MemoryCdiStore()


def checkpoint_file(settings: Settings) -> CheckpointStore:
    from npu_dra.adapters.checkpoint.files import FileCheckpointStore

    return FileCheckpointStore(plugin_data_dir(settings) / CHECKPOINT_FILE)


def checkpoint_memory() -> CheckpointStore:
    from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore

    return MemoryCheckpointStore()


def static_cdi_files(settings: Settings) -> StaticCdiSpecs:
    from npu_dra.adapters.cdi.static_files import FileStaticCdiSpecs

    return FileStaticCdiSpecs(settings.cdi_root)


def static_cdi_memory() -> StaticCdiSpecs:
    from npu_dra.adapters.cdi.memory import MemoryStaticCdiSpecs

    return MemoryStaticCdiSpecs()


# -- the kubelet plugin's servers (resources) ---------------------------------------------------


def registration_state() -> "RegistrationState":
    from npu_dra.adapters.grpc.registration_server import RegistrationState

    return RegistrationState()


def dra_socket(settings: Settings) -> Path:
    """`<kubelet plugins dir>/<driver>/dra.sock`, the endpoint the registration announces."""
    return plugin_data_dir(settings) / "dra.sock"


def registration_socket(settings: Settings) -> Path:
    from npu_dra.adapters.grpc.registration_server import registration_socket as socket_in

    return socket_in(settings.registrar_dir, settings.driver_name)


def running_plugin_sockets(
    *,
    settings: Settings,
    preparer: NodeClaims,
    inventory: InventoryCache,
    state: "RegistrationState",
) -> Iterator["UnixGrpcServer"]:
    """The DRA socket and the registration socket announcing it, on one gRPC server."""
    from npu_dra.app.kubelet_plugin.servers import serve_plugin_sockets

    yield from serve_plugin_sockets(
        dra_socket=dra_socket(settings),
        registration_socket=registration_socket(settings),
        driver=settings.driver_name,
        preparer=preparer,
        inventory=inventory,
        state=state,
    )


def running_liveness(
    *, settings: Settings, state: "RegistrationState", serving: "UnixGrpcServer"
) -> Iterator["LivenessServer | None"]:
    from npu_dra.app.kubelet_plugin.servers import serve_liveness

    yield from serve_liveness(
        host=settings.healthcheck_host,
        port=settings.healthcheck_port,
        registration=registration_socket(settings),
        dra=serving.path,
        state=state,
    )


# -- the device plugin (one resource per chip family, so built from the first probe) ------------


def running_device_plugin(
    *,
    settings: Settings,
    probe: HardwareProbe,
    static_cdi: StaticCdiSpecs,
    metrics: "PluginMetrics | None",
) -> Iterator["DevicePluginRuntime"]:
    """Every resource served and registered, counting Allocates and device lists."""
    from npu_dra.app.device_plugin.assembly import assemble

    runtime = assemble(settings, probe, static_cdi, metrics)
    runtime.start()
    try:
        yield runtime
    finally:
        runtime.stop()


def running_device_plugin_metrics(
    *,
    settings: Settings,
    metrics: "Callable[[], PrometheusMetrics]",
    serving: "DevicePluginRuntime",
) -> Iterator[object]:
    """The device plugin's /metrics on --metrics-port (off with -1), once it serves."""
    if settings.metrics_port < 0:
        yield None
        return
    server = metrics().serve(settings.metrics_port, settings.healthcheck_host)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


# -- the containers -----------------------------------------------------------------------------


class NodeContainer(containers.DeclarativeContainer):
    settings: providers.Dependency[Settings] = providers.Dependency(instance_of=Settings)
    cluster: providers.Dependency[ClusterApi] = providers.Dependency()
    taint_support: providers.Dependency[DeviceTaintSupport] = providers.Dependency(default=cluster)
    event_recorder: providers.Dependency[EventRecorder] = providers.Dependency(default=cluster)

    profile = providers.Callable(profile_named, settings.provided.device_profile)
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
            partitioned_probe, settings, hardware, vnpu_table, cluster.provider
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

    taint_mode = providers.Singleton(
        TaintMode,
        policy=providers.Callable(taint_policy, settings),
        support=taint_support,
        driver=driver,
    )
    publisher = providers.Singleton(
        PoolPublisher, inventory=inventory, cluster=cluster, driver=driver, taints=taint_mode
    )
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
    )
    # Built only on the plugins' paths (the simulation never asks for them).
    event_sink = providers.Singleton(EventSink, event_recorder)
    event_worker = providers.Resource(running_sink, event_sink)
    reporting_preparer = providers.Singleton(ClaimFailureEvents, preparer, event_sink)
    counted = providers.Singleton(served_metrics, settings, metrics.provider)
    metered_preparer = providers.Singleton(metered, reporting_preparer, counted)
    maintainer = providers.Singleton(
        PoolMaintainer,
        inventory=inventory,
        publisher=publisher,
        interval_s=settings.provided.health_interval,
        metrics=counted,
        backend=settings.provided.hardware.kind,
        events=event_sink,
    )

    # The kubelet plugin: publishing, its two sockets on one gRPC server, liveness and metrics.
    pool_maintenance = providers.Resource(
        maintained_pool, maintainer=maintainer, watcher=cluster, node=node_name, driver=driver
    )
    registration = providers.Singleton(registration_state)
    plugin_server = providers.Resource(
        running_plugin_sockets,
        settings=settings,
        preparer=metered_preparer,
        inventory=inventory,
        state=registration,
    )
    liveness_server = providers.Resource(
        running_liveness, settings=settings, state=registration, serving=plugin_server
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


class Container(containers.DeclarativeContainer):
    settings: providers.Dependency[Settings] = providers.Dependency(instance_of=Settings)

    # One set of Prometheus series per process: the API adapter counts its retries into the
    # same registry the node's /metrics serves.
    metrics = providers.Singleton(prometheus_metrics)
    api = providers.Resource(kube_api, settings.provided.kubeconfig)
    cluster = providers.Selector(
        settings.provided.cluster,
        memory=providers.Singleton(memory_cluster),
        kubernetes=providers.Singleton(kube_cluster, api, settings, metrics.provider),
    )
    taint_support = providers.Selector(
        settings.provided.cluster,
        memory=cluster,
        kubernetes=providers.Singleton(kube_taint_support, api),
    )
    event_recorder = providers.Selector(
        settings.provided.cluster,
        memory=cluster,
        kubernetes=providers.Singleton(kube_events, api),
    )
    selector_evaluator = providers.Singleton(selector_evaluator)
    node = providers.Container(
        NodeContainer,
        settings=settings,
        cluster=cluster,
        taint_support=taint_support,
        event_recorder=event_recorder,
        metrics=metrics,
    )


def container_for(settings: Settings) -> Container:
    return Container(settings=providers.Object(settings))


def node_container(root: Container, settings: Settings) -> NodeContainer:
    """Another node's plugin over `root`'s cluster API (the simulation's nodes)."""
    return NodeContainer(settings=providers.Object(settings), cluster=root.cluster)
