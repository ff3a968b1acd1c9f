"""The kubelet-facing options: where the kubelet looks for each plugin's sockets, where CDI
specs go, how the classic device plugin names and mounts what it serves, and which runtime ids
both plugins' containers get.
"""

import argparse
import re
from pathlib import Path

from npu_dra.app.options.option import Option, directory
from npu_dra.app.options.values import (
    driver_mounts,
    one_of,
    optional_path,
    resource_names,
    switch,
)

POD_UID = re.compile(r"[0-9a-fA-F-]{1,64}")  # a Kubernetes UID (RFC 4122 text): it names files
SEAMLESS_UPGRADE_MODES = ("auto", "on", "off")


def pod_uid(text: str) -> str:
    """`--pod-uid`: the plugin pod's metadata.uid (downward API), or empty."""
    if text and not POD_UID.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text[:80]!r}: not a pod UID (hex digits and dashes)")
    return text.lower()


def daemonset_name(text: str) -> str:
    """`--daemonset-name`: the DaemonSet running this plugin (a DNS subdomain), or empty."""
    from npu_dra.domain.attributes import is_dns_subdomain

    if text and not is_dns_subdomain(text):
        raise argparse.ArgumentTypeError(f"{text[:80]!r}: not a DaemonSet name (a DNS subdomain)")
    return text


def pod_namespace(text: str) -> str:
    """`--pod-namespace`: the plugin pod's namespace (a DNS label), or empty."""
    from npu_dra.domain.attributes import is_dns_label

    if text and not is_dns_label(text):
        raise argparse.ArgumentTypeError(f"{text[:80]!r}: not a namespace (a DNS label)")
    return text


# domain/profile.py's RUNTIME_IDS (the rule and its sources), spelled here so `--help` needs no
# domain import; a unit test keeps the two equal.
RUNTIME_VISIBLE_DEVICES_MODES = ("unset", "container")
RUNTIME_VISIBLE_DEVICES = Option(
    "runtime_visible_devices",
    ("--runtime-visible-devices",),
    "ASCEND_RT_VISIBLE_DEVICES in containers: unset, or container (their own ids 0..N-1)",
    "unset",
    one_of(RUNTIME_VISIBLE_DEVICES_MODES),
    "RUNTIME_VISIBLE_DEVICES",
    "MODE",
)

UPGRADE = (
    Option(
        "pod_uid",
        ("--pod-uid",),
        "this plugin pod's UID (downward API metadata.uid): names its sockets for seamless "
        "upgrades",
        "",
        pod_uid,
        "POD_UID",
        "UID",
    ),
    Option(
        "seamless_upgrade",
        ("--seamless-upgrade",),
        "sockets named per pod (--pod-uid), so an old and a new plugin pod serve side by side "
        "during an upgrade: auto (when the kubelet is 1.33 or newer), on, or off",
        "auto",
        one_of(SEAMLESS_UPGRADE_MODES),
        "SEAMLESS_UPGRADE",
        "MODE",
    ),
)

# docs/uninstall.md: what the plugin does on SIGTERM once its DaemonSet is deleted.
UNINSTALL = (
    Option(
        "daemonset_name",
        ("--daemonset-name",),
        "the DaemonSet running this plugin: once it is deleted (an uninstall), SIGTERM stops "
        "the plugin only after every claim it prepared is unprepared; empty: at once",
        "",
        daemonset_name,
        "DAEMONSET_NAME",
        "NAME",
    ),
    Option(
        "pod_namespace",
        ("--pod-namespace",),
        "this plugin pod's namespace (downward API metadata.namespace), the DaemonSet's",
        "",
        pod_namespace,
        "POD_NAMESPACE",
        "NAMESPACE",
    ),
)

API_LOCK = Option(
    "api_lock_dir",
    ("--api-lock-dir",),
    "host directory where the DRA plugin and the classic device plugin make sure only one of "
    "them serves this node; empty: not checked",
    "/var/lib/npu-dra",
    optional_path,
    "API_LOCK_DIR",
    "DIR",
)

# docs/health.md "Reboots": which boot of the node this is (the kernel's id, also in containers).
BOOT_ID = Option(
    "boot_id_file",
    ("--boot-id-file",),
    "file holding the node's boot id: after a boot, the claims still prepared get their CDI "
    "specs and vNPUs back (each device checked to be the same) before the plugin serves",
    "/proc/sys/kernel/random/boot_id",
    Path,
    "BOOT_ID_FILE",
    "FILE",
)

KUBELET = (
    directory("cdi_root", "--cdi-root", "CDI_ROOT", "/var/run/cdi", "CDI spec directory"),
    directory(
        "registrar_dir",
        "--kubelet-registrar-directory-path",
        "KUBELET_REGISTRAR_DIRECTORY_PATH",
        "/var/lib/kubelet/plugins_registry",
        "where the kubelet looks for registration sockets",
    ),
    directory(
        "plugins_dir",
        "--kubelet-plugins-directory-path",
        "KUBELET_PLUGINS_DIRECTORY_PATH",
        "/var/lib/kubelet/plugins",
        "parent of this plugin's data dir (DRA socket, checkpoint)",
    ),
    directory(
        "device_plugin_path",
        "--device-plugin-path",
        "DEVICE_PLUGIN_PATH",
        "/var/lib/kubelet/device-plugins",
        "the kubelet's device plugin directory (kubelet.sock and ours)",
    ),
)

DEVICE_PLUGIN = (
    Option(
        "resource_name",
        ("--resource-name",),
        "override the resource names: NAME, or FAMILY=NAME,... per chip family",
        "",
        resource_names,
        "RESOURCE_NAME",
    ),
    Option(
        "cdi_enabled",
        ("--cdi-enabled",),
        "answer Allocate with CDI device names too, and write their static spec",
        "false",
        switch,
        "CDI_ENABLED",
        negatable=True,
    ),
    Option(
        "driver_mounts",
        ("--driver-mounts",),
        "more read-only mounts beyond the driver files found: /host[:/container],...",
        "",
        driver_mounts,
        "DRIVER_MOUNTS",
        "MOUNTS",
    ),
)
