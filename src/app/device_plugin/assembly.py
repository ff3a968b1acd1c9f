"""The device plugin's graph, assembled from the first probe: one resource per chip family (so
a mixed node serves several sockets), each a service over its own board, served on its own
socket; the static CDI spec is written first when `--cdi-enabled`. The composition
root (app/container/) runs it as a resource; nothing here runs at import.
"""

import logging

from npu_dra.adapters.grpc.device_plugin.board import DeviceBoard
from npu_dra.adapters.grpc.device_plugin.server import SocketServer
from npu_dra.adapters.grpc.device_plugin.servicer import DevicePluginService
from npu_dra.adapters.grpc.device_plugin.watcher import KubeletSocketWatcher
from npu_dra.adapters.grpc.device_plugin.wire import KUBELET_SOCKET
from npu_dra.app.device_plugin.health_monitor import HealthMonitor
from npu_dra.app.device_plugin.registration_supervisor import DevicePluginRuntime, ResourcePlugin
from npu_dra.app.options import Settings
from npu_dra.domain.cdi import cdi_kind, runtime_edits
from npu_dra.domain.classic_resources import by_family, resource_names, socket_name
from npu_dra.domain.device_plugin_allocation import AllocateSettings
from npu_dra.domain.ids import DriverName
from npu_dra.domain.metrics import PluginMetrics
from npu_dra.domain.ports import HardwareProbe, StaticCdiSpecs
from npu_dra.domain.profile import node_profile
from npu_dra.domain.static_cdi import static_spec

log = logging.getLogger(__name__)


def assemble(
    settings: Settings,
    probe: HardwareProbe,
    static_cdi: StaticCdiSpecs,
    metrics: PluginMetrics | None = None,
) -> DevicePluginRuntime:
    """Probe once, write the static CDI spec if enabled, and build one plugin per family."""
    profile = node_profile(settings.device_profile, settings.runtime_visible_devices)
    inventory = probe.probe()
    families = by_family(inventory.devices)
    if not families:
        log.warning("no devices found on %s: serving no resource", settings.node_name)
    # A host without a node the chips need (davinci_manager) cannot serve any container: say so
    # at start, as Huawei's plugin does, rather than at every Allocate.
    runtime_edits(inventory.devices, host=inventory.host, profile=profile)
    names = resource_names(
        families, override=settings.resource_name, prefix=profile.resource_prefix
    )
    kind = cdi_kind(DriverName(settings.driver_name), profile)
    allocate = AllocateSettings(
        profile, settings.driver_mounts, kind if settings.cdi_enabled else None, inventory.host
    )
    if settings.cdi_enabled:
        devices = [device for members in families.values() for device in members]
        spec = static_spec(
            devices, kind=kind, profile=profile, mounts=settings.driver_mounts, host=inventory.host
        )
        where = static_cdi.write_static(spec=spec)
        log.info("wrote CDI spec %s (%d device(s))", where, len(spec.devices))
    boards = {family: DeviceBoard(devices) for family, devices in families.items()}
    plugins = []
    for family, board in boards.items():
        service = DevicePluginService(board, settings=allocate, name=names[family], metrics=metrics)
        server = SocketServer(settings.device_plugin_path / socket_name(family), service)
        plugins.append(ResourcePlugin(names[family], service, server))
    return DevicePluginRuntime(
        plugins,
        kubelet=KubeletSocketWatcher(settings.device_plugin_path / KUBELET_SOCKET),
        health=HealthMonitor(probe, boards, interval=settings.health_interval),
    )
