"""Flags of `npu-dra device-plugin`, each falling back to an environment variable.

A DaemonSet sets env vars more easily than it edits args, so every flag's default is read from
the environment given here (the process environment in production, a dict in tests).
"""

import argparse
import os
import platform
from collections.abc import Mapping
from pathlib import Path

import attrs

from npu_dra.adapters.grpc.device_plugin.allocate import DriverMount
from npu_dra.adapters.hardware.choose import check_backend
from npu_dra.domain.profile import profile_named

DEFAULT_PLUGIN_DIR = "/var/lib/kubelet/device-plugins"
# Beyond the driver files the probe finds (npu-smi, driver/lib64, ...): none by default.
DEFAULT_DRIVER_MOUNTS = ""
TRUE_WORDS = ("1", "true", "yes", "on")
DEFAULT_HARDWARE = {"npu": "npu-smi", "gpu": "nvml"}  # each profile's real backend


@attrs.frozen
class DevicePluginConfig:
    node_name: str
    plugin_dir: Path
    resource_names: str  # "" | "<name>" | "<Family>=<name>,..."
    health_interval: float
    cdi_enabled: bool
    cdi_root: Path
    driver_name: str
    device_profile: str
    hardware: str  # "npu-smi" | "fake:<file>"
    npu_smi_path: Path
    driver_mounts: tuple[DriverMount, ...]
    log_level: str
    dev_root: Path = Path("/dev")
    sysfs_root: Path = Path("/sys")
    ascend_root: Path = Path("/usr/local/Ascend")
    dcmi_dir: Path = Path("/usr/local/dcmi")
    ascend_install_info: Path = Path("/etc/ascend_install.info")
    driver_root: Path = Path("/")


def add_flags(parser: argparse.ArgumentParser, env: Mapping[str, str] = os.environ) -> None:
    def flag(name: str, var: str, default: str, help_text: str) -> None:
        parser.add_argument(name, default=env.get(var, default), help=f"{help_text} (${var})")

    flag("--node-name", "NODE_NAME", platform.node(), "this node's name")
    flag("--device-plugin-path", "DEVICE_PLUGIN_PATH", DEFAULT_PLUGIN_DIR, "kubelet's directory")
    flag("--resource-name", "RESOURCE_NAME", "", "override: NAME, or FAMILY=NAME,... per family")
    flag("--health-interval", "HEALTH_INTERVAL", "5", "seconds between health probes")
    flag("--cdi-root", "CDI_ROOT", "/etc/cdi", "where the static CDI spec is written")
    flag("--driver-name", "DRIVER_NAME", "", "CDI vendor k8s.<driver>; empty: the profile's")
    flag("--device-profile", "DEVICE_PROFILE", "npu", "device profile: npu or gpu")
    flag("--hardware", "HARDWARE", "", "npu-smi, nvml or fake:FILE; empty: the profile's")
    flag("--driver-root", "DRIVER_ROOT", "/", "gpu: root of the NVIDIA driver install")
    flag("--npu-smi-path", "NPU_SMI_PATH", "/usr/local/bin/npu-smi", "the npu-smi binary")
    flag("--dev-root", "DEV_ROOT", "/dev", "host dir of the device nodes (DeviceSpec host path)")
    flag("--sysfs-root", "SYSFS_ROOT", "/sys", "sysfs mount (NUMA node of each chip's PCI device)")
    flag("--ascend-root", "ASCEND_ROOT", "/usr/local/Ascend", "its driver/lib64, version.info")
    flag("--dcmi-dir", "DCMI_DIR", "/usr/local/dcmi", "DCMI library dir, mounted if present")
    flag(
        "--ascend-install-info",
        "ASCEND_INSTALL_INFO",
        "/etc/ascend_install.info",
        "driver install record, mounted if present",
    )
    flag("--driver-mounts", "DRIVER_MOUNTS", DEFAULT_DRIVER_MOUNTS, "more read-only /host[:/ctr]")
    flag("--log-level", "LOG_LEVEL", "INFO", "DEBUG, INFO, WARNING or ERROR")
    parser.add_argument(
        "--cdi-enabled",
        action=argparse.BooleanOptionalAction,
        default=env.get("CDI_ENABLED", "false").strip().lower() in TRUE_WORDS,
        help="answer Allocate with CDI device names too, and write their spec ($CDI_ENABLED)",
    )


def config_from(args: argparse.Namespace) -> DevicePluginConfig:
    """The parsed flags as one value; ValueError names the flag that is wrong."""
    interval = _number("--health-interval", args.health_interval)
    if interval <= 0:
        raise ValueError(f"--health-interval must be positive, got {args.health_interval!r}")
    profile = profile_named(args.device_profile)  # ValueError naming --device-profile
    hardware = args.hardware or DEFAULT_HARDWARE[profile.name]
    check_backend(hardware, profile.name)
    return DevicePluginConfig(
        node_name=args.node_name,
        plugin_dir=Path(args.device_plugin_path),
        resource_names=args.resource_name.strip(),
        health_interval=interval,
        cdi_enabled=bool(args.cdi_enabled),
        cdi_root=Path(args.cdi_root),
        driver_name=args.driver_name or profile.default_driver,
        device_profile=args.device_profile,
        hardware=hardware,
        npu_smi_path=Path(args.npu_smi_path),
        driver_mounts=tuple(
            DriverMount.parse(m.strip()) for m in args.driver_mounts.split(",") if m.strip()
        ),
        log_level=args.log_level.upper(),
        dev_root=Path(args.dev_root),
        sysfs_root=Path(args.sysfs_root),
        ascend_root=Path(args.ascend_root),
        dcmi_dir=Path(args.dcmi_dir),
        ascend_install_info=Path(args.ascend_install_info),
        driver_root=Path(args.driver_root),
    )


def _number(flag: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{flag}: {text!r} is not a number") from None
