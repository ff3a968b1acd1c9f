"""Flags of `npu-dra kubelet-plugin`, each with an environment fallback, and their config dict.

The DaemonSet passes flags (`--node-name=$(NODE_NAME)` ...); the same names as env vars let a
manifest or a developer set them without args. A flag wins over its env var, which wins over the
built-in default. `--cluster memory` swaps the Kubernetes API for an in-memory one: it exists
for tests and demos only and is never what a node runs.
"""

import argparse
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from npu_dra.domain.device_taints import parse_taint_policy
from npu_dra.domain.errors import DomainError
from npu_dra.domain.profile import profile_named

LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")
CLUSTERS = ("kubernetes", "memory")
DEVICE_TAINTS = ("auto", "off")
# The kubelet's gRPC probe dials the pod IP (the node's own, with hostNetwork).
HEALTHCHECK_HOST = "0.0.0.0"  # noqa: S104


@attrs.frozen
class Hardware:
    kind: str  # "npu_smi" | "nvml" | "fake"; "" until the profile's default is filled in
    fake_file: Path | None = None


# The real backend of each profile, used when --hardware is not given.
DEFAULT_HARDWARE = {"npu": "npu_smi", "gpu": "nvml"}


@attrs.frozen
class Settings:
    node_name: str
    device_profile: str
    driver_name: str
    registrar_dir: Path
    plugins_dir: Path
    cdi_root: Path
    healthcheck_port: int
    kubeconfig: str
    hardware: Hardware
    npu_smi: str
    log_level: str
    log_format: str
    cluster: str
    health_interval: float = 10.0
    claim_fetch_timeout: float = 20.0
    sysfs_root: Path = Path("/sys")
    dev_root: Path = Path("/dev")
    ascend_root: Path = Path("/usr/local/Ascend")
    dcmi_dir: Path = Path("/usr/local/dcmi")
    ascend_install_info: Path = Path("/etc/ascend_install.info")
    driver_root: Path = Path("/")
    device_taints: str = "auto"
    taint_effects: str = ""
    metrics_port: int = -1

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "Settings":
        """The parsed flags; the driver name and hardware default to the profile's."""
        values = {field.name: getattr(args, field.name) for field in attrs.fields(cls)}
        if not values["driver_name"]:
            values["driver_name"] = profile_named(values["device_profile"]).default_driver
        if not values["hardware"].kind:
            values["hardware"] = Hardware(DEFAULT_HARDWARE[values["device_profile"]])
        return cls(**values)

    def config(self) -> dict[str, Any]:
        """The container's configuration (see app/container.py for the keys it reads)."""
        return {
            "node_name": self.node_name,
            "driver_name": self.driver_name,
            "device_profile": self.device_profile,
            "hardware": {
                "kind": self.hardware.kind,
                "fake_file": str(self.hardware.fake_file or ""),
                "npu_smi_path": self.npu_smi,
                "sysfs_root": str(self.sysfs_root),
                "dev_root": str(self.dev_root),
                "ascend_root": str(self.ascend_root),
                "dcmi_dir": str(self.dcmi_dir),
                "install_info": str(self.ascend_install_info),
                "driver_root": str(self.driver_root),
            },
            "state": {"kind": "files"},
            "cdi_root": str(self.cdi_root),
            "plugins_dir": str(self.plugins_dir),
            "registrar_dir": str(self.registrar_dir),
            "healthcheck_host": HEALTHCHECK_HOST,
            "healthcheck_port": self.healthcheck_port,
            "health_interval_s": self.health_interval,
            "claim_fetch_timeout_s": self.claim_fetch_timeout,
            "cluster": {"kind": self.cluster, "kubeconfig": self.kubeconfig},
            "device_taints": {"mode": self.device_taints, "effects": self.taint_effects},
            "metrics_port": self.metrics_port,
        }


def hardware(text: str) -> Hardware:
    """`npu-smi` (Ascend chips), `nvml` (NVIDIA GPUs), `fake:FILE` (a node description file),
    or empty: the device profile's real backend."""
    if text in ("", "npu-smi", "nvml"):
        return Hardware(text.replace("-", "_"))
    kind, _, file = text.partition(":")
    if kind != "fake" or not file:
        raise argparse.ArgumentTypeError(f"{text!r}: expected npu-smi, nvml or fake:FILE")
    return Hardware("fake", Path(file))


def one_of(choices: tuple[str, ...]) -> Callable[[str], str]:
    """A `type=` that also checks env values (argparse checks `choices` on argv only)."""

    def check(text: str) -> str:
        if text.lower() not in choices:
            raise argparse.ArgumentTypeError(f"{text!r}: expected one of {', '.join(choices)}")
        return text.lower()

    return check


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive number of seconds")
    return value


KUBELET_CALL_TIMEOUT_S = 45.0


def claim_fetch_timeout(text: str) -> float:
    """Seconds, below the kubelet's 45 s prepare timeout (an answer after it is thrown away)."""
    value = positive_seconds(text)
    if value >= KUBELET_CALL_TIMEOUT_S:
        raise argparse.ArgumentTypeError(
            f"{text!r}: must be below the kubelet's {KUBELET_CALL_TIMEOUT_S:.0f}s call timeout"
        )
    return value


def taint_effects(text: str) -> str:
    """`Word=Effect,...` over the default table (domain/device_taints.py), checked here."""
    try:
        parse_taint_policy(text)
    except DomainError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def healthcheck_port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not -1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port}: expected -1 (off), 0 (any free port) or a port")
    return port


@attrs.frozen
class Flag:
    name: str
    env: str
    default: str | None  # None: required unless the env var is set
    help: str
    options: Mapping[str, Any] = attrs.field(factory=dict)


def flags() -> tuple[Flag, ...]:
    path = {"metavar": "DIR", "type": Path}
    return (
        Flag("--node-name", "NODE_NAME", None, "this node's name"),
        Flag(
            "--device-profile",
            "DEVICE_PROFILE",
            "npu",
            "device profile: npu (Ascend) or gpu (NVIDIA)",
            {"type": one_of(tuple(DEFAULT_HARDWARE))},
        ),
        Flag(
            "--driver-name",
            "DRIVER_NAME",
            "",
            "DRA driver name; empty: the profile's (npu.huawei.com, gpu.npu-dra.io)",
        ),
        Flag(
            "--kubelet-registrar-directory-path",
            "KUBELET_REGISTRAR_DIRECTORY_PATH",
            "/var/lib/kubelet/plugins_registry",
            "where the kubelet looks for registration sockets",
            {"dest": "registrar_dir", **path},
        ),
        Flag(
            "--kubelet-plugins-directory-path",
            "KUBELET_PLUGINS_DIRECTORY_PATH",
            "/var/lib/kubelet/plugins",
            "parent of this plugin's data dir (DRA socket, checkpoint)",
            {"dest": "plugins_dir", **path},
        ),
        Flag("--cdi-root", "CDI_ROOT", "/var/run/cdi", "CDI spec directory", path),
        Flag(
            "--healthcheck-port",
            "HEALTHCHECK_PORT",
            "-1",
            "grpc.health.v1 port; -1 off, 0 any free port",
            {"type": healthcheck_port},
        ),
        Flag("--kubeconfig", "KUBECONFIG", "", "kubeconfig file; empty means in-cluster"),
        Flag(
            "--hardware",
            "HARDWARE",
            "",
            "npu-smi, nvml or fake:FILE; empty: the profile's (npu-smi, nvml)",
            {"type": hardware},
        ),
        Flag(
            "--npu-smi",
            "NPU_SMI_PATH",
            "/usr/local/bin/npu-smi",
            "npu-smi executable (mounted from the host)",
        ),
        Flag(
            "--sysfs-root",
            "SYSFS_ROOT",
            "/sys",
            "sysfs mount (NUMA node of each chip's PCI device)",
            path,
        ),
        Flag(
            "--dev-root",
            "DEV_ROOT",
            "/dev",
            "host directory of the device nodes (/dev/davinciN): the CDI spec's hostPath",
            path,
        ),
        Flag(
            "--ascend-root",
            "ASCEND_ROOT",
            "/usr/local/Ascend",
            "Ascend install dir: driver/lib64 and driver/version.info are mounted read-only",
            path,
        ),
        Flag(
            "--dcmi-dir",
            "DCMI_DIR",
            "/usr/local/dcmi",
            "DCMI library dir (npu-smi needs it), mounted read-only if present",
            path,
        ),
        Flag(
            "--ascend-install-info",
            "ASCEND_INSTALL_INFO",
            "/etc/ascend_install.info",
            "driver install record, mounted read-only if present",
            {"metavar": "FILE", "type": Path},
        ),
        Flag(
            "--driver-root",
            "DRIVER_ROOT",
            "/",
            "gpu profile: root of the NVIDIA driver install (nvidia-smi, libraries)",
            path,
        ),
        Flag(
            "--health-interval",
            "HEALTH_INTERVAL",
            "10",
            "seconds between hardware health probes (changes republish the pool)",
            {"type": positive_seconds, "metavar": "SECONDS"},
        ),
        Flag(
            "--claim-fetch-timeout",
            "CLAIM_FETCH_TIMEOUT",
            "20",
            "seconds a prepare waits for the API server to return its claims, all together",
            {"type": claim_fetch_timeout, "metavar": "SECONDS"},
        ),
        Flag(
            "--metrics-port",
            "METRICS_PORT",
            "-1",
            "Prometheus /metrics port; -1 off, 0 any free port",
            {"type": healthcheck_port},
        ),
        Flag(
            "--device-taints",
            "DEVICE_TAINTS",
            "auto",
            "auto: unhealthy devices stay published with a device taint where the API server "
            "serves taints (DRADeviceTaints), else are left out; off: always left out",
            {"type": one_of(DEVICE_TAINTS)},
        ),
        Flag(
            "--taint-effects",
            "TAINT_EFFECTS",
            "",
            "health word -> taint effect over the defaults Degraded=None,Unhealthy=NoSchedule,"
            "Critical=NoExecute,Unknown=NoSchedule (e.g. Critical=NoSchedule)",
            {"type": taint_effects, "metavar": "WORD=EFFECT,..."},
        ),
        Flag("--log-level", "LOG_LEVEL", "info", "log level", {"type": one_of(LOG_LEVELS)}),
        Flag("--log-format", "LOG_FORMAT", "text", "text or json", {"type": one_of(LOG_FORMATS)}),
    )


def add_arguments(
    parser: argparse.ArgumentParser, environ: Mapping[str, str] | None = None
) -> None:
    env = os.environ if environ is None else environ
    for flag in flags():
        value = env.get(flag.env) or flag.default
        shown = f"env {flag.env}" + ("" if flag.default is None else f"; default {flag.default}")
        parser.add_argument(
            flag.name,
            default=value,
            required=value is None,
            help=f"{flag.help} ({shown})",
            **flag.options,
        )
    parser.add_argument(
        "--cluster",
        choices=CLUSTERS,
        default="kubernetes",
        help="cluster API; memory is an empty in-memory API for tests and demos only",
    )
