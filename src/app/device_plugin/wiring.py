"""The composition root of `npu-dra device-plugin`: from flags and a probe to a running graph.

Which resources exist depends on what the first probe finds (one per chip family, so a mixed
node serves several sockets), so the graph is built from that inventory at start, once; nothing
here runs at import, and the npu-smi adapter is imported only when it is chosen.
"""

import logging
import re
from collections.abc import Iterable
from pathlib import Path

from npu_dra.adapters.grpc.device_plugin.allocate import AllocateSettings
from npu_dra.adapters.grpc.device_plugin.board import DeviceBoard
from npu_dra.adapters.grpc.device_plugin.server import SocketServer
from npu_dra.adapters.grpc.device_plugin.servicer import DevicePluginService
from npu_dra.adapters.grpc.device_plugin.static_cdi import static_spec, write_static_spec
from npu_dra.adapters.grpc.device_plugin.watcher import KubeletSocketWatcher
from npu_dra.adapters.grpc.device_plugin.wire import KUBELET_SOCKET
from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.choose import HARDWARE_CHOICES, fake_probe, nvml_probe
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.app.device_plugin.flags import DevicePluginConfig
from npu_dra.app.device_plugin.health import HealthLoop, by_family
from npu_dra.app.device_plugin.runtime import DevicePluginRuntime, ResourcePlugin
from npu_dra.domain.cdi import cdi_kind, runtime_edits
from npu_dra.domain.device import Device
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.ports import HardwareProbe
from npu_dra.domain.profile import profile_named

log = logging.getLogger(__name__)

FAKE = "fake:"
_RESOURCE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def hardware_probe(config: DevicePluginConfig) -> HardwareProbe:
    """`fake:FILE` answers from a node description; `npu-smi` and `nvml` read the real devices."""
    node = NodeName(config.node_name)
    host = host_paths(config)
    nvidia = NvidiaHostPaths(dev_root=config.dev_root, driver_root=config.driver_root)
    if config.hardware.startswith(FAKE):
        path = Path(config.hardware.removeprefix(FAKE))
        return fake_probe(
            path, node=node, ascend=host, nvidia=nvidia, profile=config.device_profile
        )
    if config.hardware == "nvml":
        return nvml_probe(node=node, host=nvidia)
    if config.hardware == "npu-smi":
        from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe  # only when chosen

        return NpuSmiProbe(
            node=node,
            npu_smi=host.npu_smi,
            sysfs_root=config.sysfs_root,
            dev_root=host.dev_root,
            ascend_root=host.ascend_root,
            dcmi_dir=host.dcmi_dir,
            install_info=host.install_info,
        )
    raise ValueError(f"--hardware {config.hardware!r}: expected {HARDWARE_CHOICES}")


def host_paths(config: DevicePluginConfig) -> AscendHostPaths:
    return AscendHostPaths(
        dev_root=config.dev_root,
        npu_smi=config.npu_smi_path,
        ascend_root=config.ascend_root,
        dcmi_dir=config.dcmi_dir,
        install_info=config.ascend_install_info,
    )


def socket_name(family: str) -> str:
    return f"npu-dra-{family.lower()}.sock"


def resource_names(families: Iterable[str], *, override: str, prefix: str) -> dict[str, str]:
    """`<prefix>/<family>` each, unless `override` is one NAME or `FAMILY=NAME,...` pairs."""
    names = {family: f"{prefix}/{family}" for family in families}
    if override and "=" not in override:
        if len(names) > 1:
            raise ValueError(f"--resource-name {override!r}: several families, give FAMILY=NAME")
        names = dict.fromkeys(names, override)
    elif override:
        pairs = (p.partition("=") for p in override.split(",") if p.strip())
        names |= {f.strip(): n.strip() for f, _, n in pairs if f.strip() in names}
    for name in names.values():
        if not _RESOURCE.match(name) or name.split("/")[0].endswith("kubernetes.io"):
            raise ValueError(f"resource name {name!r} is not an extended resource name")
    return names


def build_runtime(config: DevicePluginConfig, probe: HardwareProbe) -> DevicePluginRuntime:
    """Probe once, write the static CDI spec if enabled, and assemble one plugin per family."""
    profile = profile_named(config.device_profile)
    inventory = probe.probe()
    families = by_family(inventory.devices)
    if not families:
        log.warning("no devices found on %s: serving no resource", config.node_name)
    # A host without a node the chips need (davinci_manager) cannot serve any container: say so
    # at start, as Huawei's plugin does, rather than at every Allocate.
    runtime_edits(inventory.devices, host=inventory.host, profile=profile)
    names = resource_names(families, override=config.resource_names, prefix=profile.resource_prefix)
    kind = cdi_kind(DriverName(config.driver_name), profile)
    cdi = kind if config.cdi_enabled else None
    settings = AllocateSettings(profile, config.driver_mounts, cdi, inventory.host)
    if config.cdi_enabled:
        _write_cdi(config, kind, settings, [d for ds in families.values() for d in ds])
    boards = {family: DeviceBoard(devices) for family, devices in families.items()}
    plugins = []
    for family, board in boards.items():
        service = DevicePluginService(board, settings=settings, name=names[family])
        server = SocketServer(config.plugin_dir / socket_name(family), service)
        plugins.append(ResourcePlugin(names[family], service, server))
    return DevicePluginRuntime(
        plugins,
        kubelet=KubeletSocketWatcher(config.plugin_dir / KUBELET_SOCKET),
        health=HealthLoop(probe, boards, interval=config.health_interval),
    )


def _write_cdi(
    config: DevicePluginConfig, kind: str, settings: AllocateSettings, devices: list[Device]
) -> None:
    spec = static_spec(
        devices,
        kind=kind,
        profile=settings.profile,
        mounts=settings.driver_mounts,
        host=settings.host,
    )
    path = write_static_spec(config.cdi_root, spec)
    log.info("wrote CDI spec %s (%d device(s))", path, len(spec.devices))
