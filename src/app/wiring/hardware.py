"""The node's hardware graph: the probe `--hardware` chose (npu-smi, NVML or a described fake
node), the host paths it reads, and the vNPU layouts `--vnpu` adds to its inventory."""

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from npu_dra.app.options import Settings
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.ports import ClusterApi, HardwareProbe

if TYPE_CHECKING:
    from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
    from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
    from npu_dra.domain.metrics import PluginMetrics
    from npu_dra.domain.ports import VnpuTable

CommandTimer = Callable[[str, float, bool], None]
log = logging.getLogger(__name__)


def hardware_probe(
    settings: Settings, metrics: "Callable[[], PluginMetrics] | None" = None
) -> HardwareProbe:
    """The backend `--hardware` chose (app/options/ has checked it finds the profile's
    devices); a fake node description of another profile's devices is refused by its probe.
    Where /metrics is served (`--metrics-port`), each npu-smi command is timed into `metrics`.
    What `--fault-codes` listed under two levels is warned about here, once logging is set."""
    for note in settings.fault_codes.notes if settings.fault_codes else ():
        log.warning("--fault-codes %s (as Huawei's device plugin takes it)", note)
    kind = settings.hardware.kind
    if kind == "fake":
        return described_probe(settings)
    if kind == "nvml" or (kind == "auto" and settings.device_profile == "gpu"):
        from npu_dra.adapters.hardware.choose import nvml_probe

        node = NodeName(settings.node_name)
        return nvml_probe(node=node, host=nvidia_host(settings), profile=settings.device_profile)
    if kind in ("dcmi", "auto"):
        return dcmi_or_auto_probe(settings, timed_commands(settings, metrics))
    return npu_smi_probe(settings, timed_commands(settings, metrics))


def dcmi_or_auto_probe(settings: Settings, on_command: CommandTimer | None) -> HardwareProbe:
    """`--hardware dcmi`: libdcmi.so from `--dcmi-dir` (else the loader's search path);
    `auto`: the same where it loads and initialises, npu-smi otherwise (it logs which)."""
    from npu_dra.adapters.hardware.choose import auto_probe, dcmi_probe

    in_dir = settings.dcmi_dir / "libdcmi.so"
    library = in_dir if in_dir.exists() else None
    node, host = NodeName(settings.node_name), ascend_host(settings)
    if settings.hardware.kind == "dcmi":
        return dcmi_probe(
            node=node,
            host=host,
            sysfs_root=settings.sysfs_root,
            library=library,
            timeout=settings.probe_timeout,
            profile=settings.device_profile,
            fault_table=settings.fault_codes,
        )
    return auto_probe(
        node=node,
        host=host,
        npu_smi=lambda: npu_smi_probe(settings, on_command),
        sysfs_root=settings.sysfs_root,
        library=library,
        timeout=settings.probe_timeout,
        fault_table=settings.fault_codes,
    )


def described_probe(settings: Settings) -> HardwareProbe:
    """`--hardware fake:FILE` over this machine's host paths, or a simulated node's inline
    description (nothing on this machine)."""
    from npu_dra.adapters.hardware.choose import fake_probe

    node, profile = NodeName(settings.node_name), settings.device_profile
    choice = settings.hardware
    if choice.description is not None:
        return fake_probe(choice.description, node=node, profile=profile)
    if choice.fake_file is None:
        raise ValueError("--hardware fake needs a node description file: fake:FILE")
    return fake_probe(
        choice.fake_file,
        node=node,
        ascend=ascend_host(settings),
        nvidia=nvidia_host(settings),
        profile=profile,
    )


def npu_smi_probe(settings: Settings, on_command: CommandTimer | None) -> HardwareProbe:
    from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe

    host = ascend_host(settings)
    return NpuSmiProbe(
        node=NodeName(settings.node_name),
        npu_smi=host.npu_smi,
        sysfs_root=settings.sysfs_root,
        dev_root=host.dev_root,
        timeout=settings.probe_timeout,
        ascend_root=host.ascend_root,
        dcmi_dir=host.dcmi_dir,
        install_info=host.install_info,
        on_command=on_command,
        fault_table=settings.fault_codes,
    )


def timed_commands(
    settings: Settings, metrics: "Callable[[], PluginMetrics] | None"
) -> CommandTimer | None:
    """Where /metrics is served, a callback that times each npu-smi command into its series."""
    if metrics is None or settings.metrics_port < 0:
        return None
    counted = metrics()

    def on_command(command: str, seconds: float, ok: bool) -> None:
        counted.hardware_command_done(command=command, seconds=seconds, ok=ok)

    return on_command


def ascend_host(settings: Settings) -> "AscendHostPaths":
    from npu_dra.adapters.hardware.ascend_host import AscendHostPaths

    return AscendHostPaths(
        dev_root=settings.dev_root,
        npu_smi=settings.npu_smi_path,
        ascend_root=settings.ascend_root,
        dcmi_dir=settings.dcmi_dir,
        install_info=settings.ascend_install_info,
    )


def nvidia_host(settings: Settings) -> "NvidiaHostPaths":
    from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths

    return NvidiaHostPaths(
        dev_root=settings.dev_root,
        driver_root=settings.driver_root,
        host_driver_root=settings.host_driver_root,
    )


def vnpu_table(settings: Settings, probe: HardwareProbe) -> "VnpuTable | None":
    """The backend's vNPU capability when `--vnpu=templates` asks for it; its npu-smi commands
    are bounded by `--probe-timeout`, as the probe's are."""
    from npu_dra.adapters.hardware.vnpu_probe import vnpu_table_for

    return vnpu_table_for(
        settings.vnpu,
        settings.hardware.kind,
        probe,
        settings.npu_smi_path,
        timeout=settings.probe_timeout,
    )


def pool_probe(settings: Settings, probe: HardwareProbe) -> HardwareProbe:
    """What the kubelet plugin publishes from: `probe` less the chips the kubelet still holds
    for pods of a classic device plugin (a node moved to DRA: adapters/kubelet_devices), read
    under the kubelet's root, the parent of --kubelet-plugins-directory-path. Not for the
    simulation, whose nodes have no kubelet."""
    if settings.state != "files" or settings.device_profile != "npu":
        return probe
    from npu_dra.adapters.hardware.classic_held import classic_held_probe

    return classic_held_probe(probe, settings.plugins_dir.parent)


def vnpu_layout_probe(
    settings: Settings,
    probe: HardwareProbe,
    table: "VnpuTable | None",
    cluster: Callable[[], ClusterApi],
) -> HardwareProbe:
    """The probe whose inventory also holds the chips' vNPU layouts, where hardware and API
    server allow (app/services/vnpu_layout.py decides, once, and logs it). The cluster API is
    asked for only with vNPUs on: the first probe runs while it is being configured."""
    from npu_dra.app.services.vnpu_layout import vnpu_layout_probe as decide

    if (settings.vnpu or "none") == "none":
        return probe
    node, driver = NodeName(settings.node_name), DriverName(settings.driver_name)
    return decide(probe, table, mode=settings.vnpu, cluster=cluster(), node=node, driver=driver)


def backend_name(probe: HardwareProbe) -> str:
    """What `probe` reads through, as the metrics label it: what `auto` took, not `auto`."""
    from npu_dra.adapters.hardware.choose import backend_of

    return backend_of(probe)
