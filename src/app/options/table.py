"""Every option by name, which of them each command takes, and how they become a parser's flags.

`OPTIONS` joins the tables written by concern (node.py, kubelet.py, cluster.py,
observability.py, simulate.py); `CONCERNS` names those concerns, the groups a command's `--help`
shows its options under (in this order); `COMMANDS` lists each command's options in the order
its `--help` shows them within a group. A flag wins over its env var, which wins over the
default, on every command alike.
"""

import argparse
import os
from collections.abc import Mapping

from npu_dra.app.options.cluster import CLUSTER, SHARING
from npu_dra.app.options.kubelet import (
    API_LOCK,
    BOOT_ID,
    DEVICE_PLUGIN,
    KUBELET,
    RUNTIME_VISIBLE_DEVICES,
    UNINSTALL,
    UPGRADE,
)
from npu_dra.app.options.node import HOST_PATHS, NODE
from npu_dra.app.options.observability import LOGGING, PORTS
from npu_dra.app.options.option import Option
from npu_dra.app.options.simulate import OUTPUT, SIMULATE

CONCERNS: tuple[tuple[str, tuple[Option, ...]], ...] = (
    ("node and hardware", NODE),
    ("host paths", HOST_PATHS),
    ("kubelet, CDI and containers", (*KUBELET, *DEVICE_PLUGIN, RUNTIME_VISIBLE_DEVICES)),
    ("cluster, claims and devices", (*CLUSTER, *SHARING)),
    ("upgrades, restarts and uninstall", (*UPGRADE, *UNINSTALL, API_LOCK, BOOT_ID)),
    ("probes, metrics and logs", (*PORTS, *LOGGING)),
    ("output", (OUTPUT,)),
    ("simulation", SIMULATE),
)
OPTIONS: Mapping[str, Option] = {
    option.dest: option for _, options in CONCERNS for option in options
}
CONCERN_OF: Mapping[str, str] = {
    option.dest: title for title, options in CONCERNS for option in options
}

_HARDWARE = (
    *("node_name", "device_profile", "driver_name", "hardware", "npu_smi_path", "probe_timeout"),
    *("sysfs_root", "dev_root", "ascend_root", "dcmi_dir", "ascend_install_info", "driver_root"),
    "host_driver_root",
)
_LOGGING = ("log_level", "log_format")
COMMANDS: Mapping[str, tuple[str, ...]] = {
    "kubelet-plugin": (
        *_HARDWARE,
        *("registrar_dir", "plugins_dir", "cdi_root", "healthcheck_port", "kubeconfig"),
        *("pod_uid", "seamless_upgrade", "api_lock_dir", "daemonset_name", "pod_namespace"),
        "boot_id_file",
        *("cluster", "health_interval", "claim_fetch_timeout", "claim_prefetch", "vnpu"),
        *("metrics_port", "device_taints", "taint_effects", "runtime_visible_devices"),
        *("fault_codes", "shared_chips", "chip_shares"),
        *_LOGGING,
    ),
    "device-plugin": (
        *_HARDWARE,
        *("device_plugin_path", "resource_name", "health_interval", "cdi_enabled", "cdi_root"),
        "api_lock_dir",
        *("driver_mounts", "metrics_port", "runtime_visible_devices", "fault_codes"),
        *_LOGGING,
    ),
    "discover": (*_HARDWARE, "output", *_LOGGING),
    "simulate": (
        *(
            "scenario",
            "snapshot",
            "from_cluster",
            "kubeconfig",
            "cordon",
            "remove_node",
            "unhealthy",
            "generate",
            "output",
            "search_budget",
            "prepare",
            "driver_name",
        ),
        *("cdi_out", "explain", "fail_on_pending", "kubernetes_version", "feature_gates"),
        *("shared_chips", "chip_shares"),
        *_LOGGING,
    ),
}


def add_options(
    parser: argparse.ArgumentParser, command: str, environ: Mapping[str, str] | None = None
) -> None:
    """The command's flags on `parser`, their defaults read from `environ` (os.environ)."""
    env = os.environ if environ is None else environ
    groups = {title: parser.add_argument_group(f"{title} options") for title, _ in CONCERNS}
    for dest in sorted(COMMANDS[command], key=_concern_order):
        option, group = OPTIONS[dest], groups[CONCERN_OF[dest]]
        from_env = option.from_env(env)
        default = from_env if from_env is not None else option.default
        if option.negatable:
            # The default stays text until settings_from, so a bad env value is reported by
            # the command that reads it, not by every command's parser.
            group.add_argument(
                *option.flags,
                dest=dest,
                action=argparse.BooleanOptionalAction,
                default=default,
                help=_help(option),
            )
            continue
        group.add_argument(
            *option.flags,
            dest=dest,
            default=default,
            type=option.parse,
            metavar=option.metavar,
            help=_help(option).replace("%", "%%"),
        )


def _concern_order(dest: str) -> int:
    """Where `dest`'s concern stands in CONCERNS (a stable sort keeps COMMANDS' order in it)."""
    return [title for title, _ in CONCERNS].index(CONCERN_OF[dest])


def _help(option: Option) -> str:
    """The option's help, followed by its env var and its default where it has them."""
    shown = [f"env {option.env}"] if option.env else []
    if option.default:
        shown.append(f"default {option.default}")
    return f"{option.help} ({'; '.join(shown)})" if shown else option.help
