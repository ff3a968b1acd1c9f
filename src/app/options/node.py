"""The node's own options: its name, its device profile and hardware backend, and the host
paths the backends probe and the plugins mount (npu-smi, sysfs, /dev, the driver installs).

Every command that touches a node's devices (discover and both plugins) takes all of them; the
plugins also take `--fault-codes` (FAULT_CODES), the table that classifies chips' error codes.
"""

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from npu_dra.app.options.option import Option, directory
from npu_dra.app.options.values import (
    DEVICE_PROFILES,
    THIS_HOST,
    driver_name,
    hardware,
    one_of,
    optional_host_path,
    positive_seconds,
    this_host,
)

if TYPE_CHECKING:
    from npu_dra.domain.fault_codes import FaultCodeTable

MAX_FAULT_CODES_BYTES = 1 << 20  # Huawei's own table is under 10 kB
TABLE_DEPTH = 2  # a mapping of lists


def fault_codes_file(text: str) -> "FaultCodeTable | None":
    """`--fault-codes FILE`: a fault-code table in Huawei's faultCode.json shape, JSON or YAML
    (an operator's ConfigMap); empty: None, the built-in table. Checked when flags are parsed,
    so a bad file stops the start with the file and the entry (or line) named."""
    if not text:
        return None
    import yaml

    from npu_dra.app.options.files import read_flag_file
    from npu_dra.domain.fault_codes import FaultTableError, fault_table

    data = read_flag_file(text, limit=MAX_FAULT_CODES_BYTES)
    try:
        _check_nesting(yaml.parse(data, Loader=yaml.SafeLoader), text)
        decoded = yaml.safe_load(data)
    except yaml.YAMLError as error:
        raise argparse.ArgumentTypeError(f"{text}: neither JSON nor YAML: {error}") from None
    try:
        return fault_table(decoded, source=text)
    except FaultTableError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _check_nesting(events: "Iterable[object]", source: str) -> None:
    """A table is a mapping of lists of codes: anything nested deeper is refused at its line,
    read as events (PyYAML's own parser: libyaml's reads a flow collection whole first) before
    it is built (PyYAML builds nesting by recursion)."""
    import yaml

    depth = 0
    for event in events:
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > TABLE_DEPTH:
                mark = event.start_mark
                at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
                raise argparse.ArgumentTypeError(
                    f"{source}: {at}nested deeper than <level>Codes: [codes]"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


FAULT_CODES = Option(
    "fault_codes",
    ("--fault-codes",),
    "fault-code table (JSON or YAML, Huawei's faultCode.json shape: <level>Codes: [codes]) "
    "that replaces the built-in one; empty: Huawei's table as built in",
    "",
    fault_codes_file,
    "FAULT_CODES",
    "FILE",
)


NODE = (
    Option("node_name", ("--node-name",), "this node's name", THIS_HOST, this_host, "NODE_NAME"),
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
        driver_name,
        "DRIVER_NAME",
    ),
    Option(
        "hardware",
        ("--hardware",),
        "auto (npu: DCMI where libdcmi.so loads, else npu-smi; gpu: nvml), dcmi, npu-smi, "
        "nvml or fake:FILE (a node description); empty: the profile's real backend",
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
    FAULT_CODES,
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
        "DCMI library dir (npu-smi needs it; --hardware dcmi|auto loads its libdcmi.so), "
        "mounted read-only if present",
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
        "gpu profile: root of the NVIDIA driver install (nvidia-smi, libraries) as this "
        "process sees it",
    ),
    Option(
        "host_driver_root",
        ("--host-driver-root",),
        "gpu profile: the same driver install's path on the host, where the plugin's container "
        "mounts it elsewhere (the CDI specs name host paths); empty: --driver-root",
        "",
        optional_host_path,
        "HOST_DRIVER_ROOT",
        "DIR",
    ),
)
