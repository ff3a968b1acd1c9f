"""The node's own options: its name, its device profile and hardware backend, and the host
paths the backends probe and the plugins mount (npu-smi, sysfs, /dev, the driver installs).

Every command that touches a node's devices (discover and both plugins) takes all of them.
"""

from pathlib import Path

from npu_dra.app.options.option import Option, directory
from npu_dra.app.options.values import (
    DEVICE_PROFILES,
    hardware,
    one_of,
    positive_seconds,
    this_host,
)

NODE = (
    Option("node_name", ("--node-name",), "this node's name", "", this_host, "NODE_NAME"),
    Option(
        "device_profile",
        ("--device-profile",),
        "device profile: npu (Ascend NPUs) or gpu (NVIDIA GPUs)",
        "npu",
        one_of(DEVICE_PROFILES),
        "DEVICE_PROFILE",
    ),
    Option(
        "driver_name",
        ("--driver-name",),
        "DRA driver name (CDI vendor k8s.<driver>); empty: the profile's "
        "(npu.huawei.com, gpu.npu-dra.io)",
        "",
        env="DRIVER_NAME",
    ),
    Option(
        "hardware",
        ("--hardware",),
        "npu-smi, nvml or fake:FILE (a node description); empty: the profile's real backend",
        "",
        hardware,
        "HARDWARE",
        "BACKEND",
    ),
    Option(
        "npu_smi_path",
        ("--npu-smi-path", "--npu-smi"),
        "npu-smi executable (mounted from the host)",
        "/usr/local/bin/npu-smi",
        Path,
        "NPU_SMI_PATH",
        "FILE",
    ),
    Option(
        "probe_timeout",
        ("--probe-timeout", "--timeout"),
        "seconds one npu-smi call may take",
        "10",
        positive_seconds,
        "PROBE_TIMEOUT",
        "SECONDS",
    ),
    Option(
        "health_interval",
        ("--health-interval",),
        "seconds between hardware health probes (a change republishes or re-lists)",
        "10",
        positive_seconds,
        "HEALTH_INTERVAL",
        "SECONDS",
    ),
)

HOST_PATHS = (
    directory(
        "sysfs_root",
        "--sysfs-root",
        "SYSFS_ROOT",
        "/sys",
        "sysfs mount (NUMA node of each chip's PCI device)",
    ),
    directory(
        "dev_root",
        "--dev-root",
        "DEV_ROOT",
        "/dev",
        "host directory of the device nodes (/dev/davinciN): the CDI and DeviceSpec host path",
    ),
    directory(
        "ascend_root",
        "--ascend-root",
        "ASCEND_ROOT",
        "/usr/local/Ascend",
        "Ascend install dir: driver/lib64 and driver/version.info are mounted read-only",
    ),
    directory(
        "dcmi_dir",
        "--dcmi-dir",
        "DCMI_DIR",
        "/usr/local/dcmi",
        "DCMI library dir (npu-smi needs it), mounted read-only if present",
    ),
    Option(
        "ascend_install_info",
        ("--ascend-install-info",),
        "driver install record, mounted read-only if present",
        "/etc/ascend_install.info",
        Path,
        "ASCEND_INSTALL_INFO",
        "FILE",
    ),
    directory(
        "driver_root",
        "--driver-root",
        "DRIVER_ROOT",
        "/",
        "gpu profile: root of the NVIDIA driver install (nvidia-smi, libraries)",
    ),
)
