"""The composition root: every object graph npu-dra runs is built here, from configuration.

`NodeContainer` holds what one node's plugin needs (hardware, stores, services); the kubelet
plugin uses one, the simulation one per simulated node, all sharing the root's cluster API.
Services receive their collaborators as constructor arguments and never look them up.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from npu_dra.adapters.cdi.files import FileCdiStore
from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.cel.evaluator import CelSelectorEvaluator
from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.cluster.kube.connect import api_client
from npu_dra.adapters.cluster.kube.device_taints import KubeDeviceTaintSupport
from npu_dra.adapters.cluster.kube.events import KubeEvents
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.grpc.registration import RegistrationState
from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.choose import check_backend, fake_probe, nvml_probe
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.adapters.metrics.prometheus import PrometheusMetrics
from npu_dra.app.device_plugin.flags import DevicePluginConfig
from npu_dra.app.device_plugin.wiring import build_runtime, hardware_probe
from npu_dra.app.kubelet_plugin.metrics_server import serve_metrics
from npu_dra.app.kubelet_plugin.servers import (
    dra_socket_path,
    registration_socket_path,
    serve_dra,
    serve_health,
    serve_registration,
)
from npu_dra.app.services.claim_events import ClaimFailureEvents
from npu_dra.app.services.device_taints import TaintMode
from npu_dra.app.services.event_sink import EventSink, running_sink
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer, maintained_pool
from npu_dra.app.services.metered import MeteredNodeClaims
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.device_taints import TaintPolicy, parse_taint_policy
from npu_dra.domain.ports import ClusterApi, DeviceTaintSupport, EventRecorder
from npu_dra.domain.profile import profile_named


def plugin_data_dir(plugins_dir: str, driver: str) -> Path:
    """`<kubelet plugins dir>/<driver>`: same path inside and outside the container."""
    return Path(plugins_dir) / driver


def fake_description(
    fake_file: str | None, inline: Mapping[str, Any] | None
) -> Path | Mapping[str, Any]:
    """A node description file, or one given inline (the simulation's SimulatedNode.spec)."""
    if inline:
        return inline
    if not fake_file:
        raise ValueError("fake hardware needs a node description file")
    return Path(fake_file)


def path_or(value: str | None, default: str) -> Path:
    return Path(value or default)


def host_paths(
    npu_smi: str | None,
    dev_root: str | None,
    ascend_root: str | None,
    dcmi_dir: str | None,
    install_info: str | None,
) -> AscendHostPaths | None:
    """The host's driver paths from the plugin's flags; None where no flags say (simulation),
    so fake hardware then looks at nothing on this machine."""
    if not npu_smi:
        return None
    defaults = AscendHostPaths()
    return AscendHostPaths(
        dev_root=path_or(dev_root, str(defaults.dev_root)),
        npu_smi=Path(npu_smi),
        ascend_root=path_or(ascend_root, str(defaults.ascend_root)),
        dcmi_dir=path_or(dcmi_dir, str(defaults.dcmi_dir)),
        install_info=path_or(install_info, str(defaults.install_info)),
    )


def nvidia_paths_or_none(flags_given: str | None, paths: NvidiaHostPaths) -> NvidiaHostPaths | None:
    """Like `host_paths`: fake GPUs look at this machine only when the plugin's flags say."""
    return paths if flags_given else None


def npu_smi_probe(*, profile: str | None, **paths: Any) -> NpuSmiProbe:
    """NpuSmiProbe, refused (ValueError naming the flags) under another vendor's profile."""
    if profile is not None:
        check_backend("npu-smi", profile)
    return NpuSmiProbe(**paths)


def or_default(value: float | None, default: float) -> float:
    return float(value) if value is not None else default


def taint_policy(mode: str | None, effects: str | None) -> TaintPolicy | None:
    """`--device-taints auto`: taint where the server serves taints; otherwise (off, or the
    simulation, which sets neither) unusable devices are left out."""
    return parse_taint_policy(effects or "") if mode == "auto" else None


def checkpoint_path(plugins_dir: str, driver: str) -> Path:
    return plugin_data_dir(plugins_dir, driver) / "checkpoint.json"


class NodeContainer(containers.DeclarativeContainer):
    config = providers.Configuration()
    cluster: providers.Dependency[ClusterApi] = providers.Dependency()
    taint_support: providers.Dependency[DeviceTaintSupport] = providers.Dependency(default=cluster)
    event_recorder: providers.Dependency[EventRecorder] = providers.Dependency(default=cluster)

    profile = providers.Callable(profile_named, config.device_profile)
    host = providers.Callable(
        host_paths,
        config.hardware.npu_smi_path,
        config.hardware.dev_root,
        config.hardware.ascend_root,
        config.hardware.dcmi_dir,
        config.hardware.install_info,
    )
    nvidia_host = providers.Callable(
        NvidiaHostPaths,
        dev_root=providers.Callable(path_or, config.hardware.dev_root, "/dev"),
        driver_root=providers.Callable(path_or, config.hardware.driver_root, "/"),
    )
    hardware = providers.Selector(
        config.hardware.kind,
        fake=providers.Singleton(
            fake_probe,
            providers.Callable(
                fake_description, config.hardware.fake_file, config.hardware.description
            ),
            node=config.node_name,
            ascend=host,
            nvidia=providers.Callable(
                nvidia_paths_or_none, config.hardware.npu_smi_path, nvidia_host
            ),
            profile=config.device_profile,
        ),
        nvml=providers.Singleton(
            nvml_probe, node=config.node_name, host=nvidia_host, profile=config.device_profile
        ),
        npu_smi=providers.Singleton(
            npu_smi_probe,
            profile=config.device_profile,
            node=config.node_name,
            npu_smi=providers.Callable(
                path_or, config.hardware.npu_smi_path, "/usr/local/bin/npu-smi"
            ),
            sysfs_root=providers.Callable(path_or, config.hardware.sysfs_root, "/sys"),
            dev_root=providers.Callable(path_or, config.hardware.dev_root, "/dev"),
            ascend_root=providers.Callable(
                path_or, config.hardware.ascend_root, "/usr/local/Ascend"
            ),
            dcmi_dir=providers.Callable(path_or, config.hardware.dcmi_dir, "/usr/local/dcmi"),
            install_info=providers.Callable(
                path_or, config.hardware.install_info, "/etc/ascend_install.info"
            ),
        ),
    )
    inventory = providers.Singleton(InventoryCache, probe=hardware)

    cdi_store = providers.Selector(
        config.state.kind,
        files=providers.Singleton(
            FileCdiStore,
            providers.Callable(Path, config.cdi_root),
            driver=config.driver_name,
            cdi_class=profile.provided.cdi_class,
        ),
        memory=providers.Singleton(MemoryCdiStore),
    )
    checkpoint_store = providers.Selector(
        config.state.kind,
        files=providers.Singleton(
            FileCheckpointStore,
            providers.Callable(checkpoint_path, config.plugins_dir, config.driver_name),
        ),
        memory=providers.Singleton(MemoryCheckpointStore),
    )
    taint_mode = providers.Singleton(
        TaintMode,
        policy=providers.Callable(
            taint_policy, config.device_taints.mode, config.device_taints.effects
        ),
        support=taint_support,
        driver=config.driver_name,
    )
    publisher = providers.Singleton(
        PoolPublisher,
        inventory=inventory,
        cluster=cluster,
        driver=config.driver_name,
        taints=taint_mode,
    )
    preparer = providers.Singleton(
        ClaimPreparer,
        cluster=cluster,
        cdi=cdi_store,
        checkpoints=checkpoint_store,
        inventory=inventory,
        driver=config.driver_name,
        profile=profile,
        fetch_deadline_s=providers.Callable(or_default, config.claim_fetch_timeout_s, 20.0),
    )
    # Built only on the kubelet plugin's path (the simulation never asks for them).
    metrics = providers.Singleton(PrometheusMetrics)
    event_sink = providers.Singleton(EventSink, event_recorder)
    event_worker = providers.Resource(running_sink, event_sink)
    reporting_preparer = providers.Singleton(ClaimFailureEvents, preparer, event_sink)
    metered_preparer = providers.Singleton(MeteredNodeClaims, reporting_preparer, metrics)
    maintainer = providers.Singleton(
        PoolMaintainer,
        inventory=inventory,
        publisher=publisher,
        interval_s=providers.Callable(or_default, config.health_interval_s, 10.0),
        metrics=metrics,
        backend=config.hardware.kind,
        events=event_sink,
    )
    pool_maintenance = providers.Resource(
        maintained_pool,
        maintainer=maintainer,
        watcher=cluster,
        node=config.node_name,
        driver=config.driver_name,
    )
    # The kubelet plugin's servers (resources: started when first asked for, in the runtime's
    # order, and stopped on shutdown); the simulation never asks for them.
    registration_state = providers.Singleton(RegistrationState)
    dra_socket = providers.Callable(dra_socket_path, config.plugins_dir, config.driver_name)
    registration_socket = providers.Callable(
        registration_socket_path, config.registrar_dir, config.driver_name
    )
    dra_server = providers.Resource(
        serve_dra, socket=dra_socket, preparer=metered_preparer, inventory=inventory
    )
    metrics_server = providers.Resource(
        serve_metrics,
        metrics=metrics,
        port=config.metrics_port,
        host=config.healthcheck_host,
        inventory=inventory,
        registration=registration_state,
        checkpoints=checkpoint_store,
    )
    registration_server = providers.Resource(
        serve_registration,
        socket=registration_socket,
        driver=config.driver_name,
        endpoint=dra_socket,
        state=registration_state,
    )
    health_server = providers.Resource(
        serve_health,
        host=config.healthcheck_host,
        port=config.healthcheck_port,
        registration=registration_socket,
        dra=dra_socket,
        state=registration_state,
    )


class DevicePluginContainer(containers.DeclarativeContainer):
    """`npu-dra device-plugin`: the probe its flags choose, and the runtime built from the first
    inventory (one resource per chip family, so the graph depends on what the probe finds)."""

    settings: providers.Dependency[DevicePluginConfig] = providers.Dependency(
        instance_of=DevicePluginConfig
    )
    hardware = providers.Singleton(hardware_probe, settings)
    runtime = providers.Singleton(build_runtime, settings, hardware)


class Container(containers.DeclarativeContainer):
    config = providers.Configuration()

    api = providers.Singleton(api_client, config.cluster.kubeconfig)
    cluster = providers.Selector(
        config.cluster.kind,
        memory=providers.Singleton(MemoryCluster),
        kubernetes=providers.Singleton(KubeCluster, api),
    )
    taint_support = providers.Selector(
        config.cluster.kind,
        memory=cluster,
        kubernetes=providers.Singleton(KubeDeviceTaintSupport, api),
    )
    event_recorder = providers.Selector(
        config.cluster.kind,
        memory=cluster,
        kubernetes=providers.Singleton(KubeEvents, api),
    )
    selector_evaluator = providers.Singleton(CelSelectorEvaluator)
    node = providers.Container(
        NodeContainer,
        config=config,
        cluster=cluster,
        taint_support=taint_support,
        event_recorder=event_recorder,
    )
