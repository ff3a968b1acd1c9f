"""`Settings`: every option's parsed value in one frozen object, the only configuration the
composition root (app/container/) reads, and how a command's parsed flags become one.

`resolved` fills in what the device profile decides (its driver name, its real backend) and
refuses a real backend that finds another profile's devices: that rule is the domain's
(domain/profile.py), read here only when settings are made, so `--help` never loads it.
"""

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from npu_dra.app.options.option import Option
from npu_dra.app.options.table import OPTIONS
from npu_dra.app.options.values import Hardware, OptionError, hardware

if TYPE_CHECKING:
    from npu_dra.domain.cdi import Mount
    from npu_dra.domain.fault_codes import FaultCodeTable
    from npu_dra.domain.ids import DeviceName
    from npu_dra.domain.scheduling.versions import SchedulerVersion

# The kubelet's gRPC probe dials the pod IP (the node's own, with hostNetwork).
HEALTHCHECK_HOST = "0.0.0.0"  # noqa: S104
# The one-shot commands print their answer; their log says only what went wrong, by default.
QUIET_COMMANDS = ("discover", "simulate")
QUIET_LOG_LEVEL = "warning"


@attrs.frozen
class Settings:
    """Every option's parsed value; the composition root's one input. Options a command does
    not take keep their declared defaults."""

    node_name: str
    device_profile: str
    driver_name: str
    hardware: Hardware
    npu_smi_path: Path
    probe_timeout: float
    sysfs_root: Path
    dev_root: Path
    ascend_root: Path
    dcmi_dir: Path
    ascend_install_info: Path
    driver_root: Path
    host_driver_root: Path | None
    health_interval: float
    cdi_root: Path
    registrar_dir: Path
    plugins_dir: Path
    pod_uid: str
    seamless_upgrade: str
    daemonset_name: str
    pod_namespace: str
    api_lock_dir: Path | None
    boot_id_file: Path
    healthcheck_port: int
    kubeconfig: str
    cluster: str
    claim_fetch_timeout: float
    claim_prefetch: bool
    vnpu: str
    metrics_port: int
    device_taints: str
    taint_effects: str
    fault_codes: "FaultCodeTable | None"
    shared_chips: "frozenset[DeviceName] | None"  # empty: none shared; None: all
    chip_shares: int
    device_plugin_path: Path
    resource_name: str
    cdi_enabled: bool
    driver_mounts: "tuple[Mount, ...]"
    runtime_visible_devices: str
    log_level: str
    log_format: str
    output: str
    scenario: Path | None
    generate: str
    search_budget: int
    prepare: bool
    cdi_out: Path | None
    fail_on_pending: bool
    explain: bool
    snapshot: Path | None
    from_cluster: bool
    cordon: str
    remove_node: str
    unhealthy: str
    kubernetes_version: str
    feature_gates: str
    # Not flags: where prepared claims live (the simulation keeps them in memory per node).
    state: str = "files"
    # The kube-scheduler simulate decides as: its in-memory API server keeps what that
    # version's gates keep (None: every field, as the other commands' memory cluster does).
    simulated: "SchedulerVersion | None" = None
    healthcheck_host: str = HEALTHCHECK_HOST

    def derive(self, **changes: Any) -> "Settings":
        """These settings with `changes`, the profile's driver and backend filled in again."""
        return resolved(attrs.evolve(self, **changes))


def defaults(**overrides: Any) -> Settings:
    """The declared defaults (environment ignored), with `overrides`: for tests and tools."""
    values = {dest: option.parse(option.default) for dest, option in OPTIONS.items()}
    return resolved(Settings(**(values | overrides)))


def settings_from(args: argparse.Namespace) -> Settings:
    """The parsed flags of one command (`args.command`, set by the CLI's subparsers); the
    options it does not take keep their defaults."""
    given = {dest: getattr(args, dest) for dest in OPTIONS if hasattr(args, dest)}
    for dest, value in given.items():
        if isinstance(value, str) and OPTIONS[dest].negatable:
            given[dest] = _switch_from_env(OPTIONS[dest], value)
    if not given.get("log_level"):
        quiet = getattr(args, "command", None) in QUIET_COMMANDS
        given["log_level"] = QUIET_LOG_LEVEL if quiet else "info"
    return defaults(**given)


def _switch_from_env(option: Option, text: str) -> bool:
    try:
        return bool(option.parse(text))
    except argparse.ArgumentTypeError as error:
        raise OptionError(f"{option.env or option.flag}: {error}") from None


def resolved(settings: Settings) -> Settings:
    """Fill in what the profile decides: its driver name and its default backend (Ascend:
    auto, DCMI where libdcmi.so works, else npu-smi; NVIDIA: nvml)."""
    from npu_dra.domain.profile import backend_mismatch, profile_named

    profile = profile_named(settings.device_profile)
    changes: dict[str, Any] = {}
    if not settings.driver_name:
        changes["driver_name"] = profile.default_driver
    if not settings.hardware.kind:
        changes["hardware"] = hardware(profile.default_backend)
    if not settings.log_level:
        changes["log_level"] = "info"
    if settings.daemonset_name and not settings.pod_namespace:
        raise OptionError("--daemonset-name needs --pod-namespace (POD_NAMESPACE), its namespace")
    if settings.claim_prefetch and settings.cluster != "kubernetes":
        raise OptionError("--claim-prefetch needs --cluster=kubernetes: it watches pods there")
    mismatch = backend_mismatch(changes.get("hardware", settings.hardware).kind, profile.name)
    if mismatch is not None:
        raise OptionError(mismatch)
    return attrs.evolve(settings, **changes) if changes else settings
