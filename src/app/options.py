"""Every flag of every `npu-dra` command, declared once, and the typed settings they make.

Each `Option` says its flag (and any older alias a manifest still uses), its environment
variable, its default, its help and how its text is parsed; `COMMANDS` says which options each
command takes. A flag wins over its env var, which wins over the default, on every command
alike. The parsed values become one frozen `Settings`, the only configuration the composition
root (app/container.py) reads. Importing this module costs nothing but argparse and attrs, so
`npu-dra --help` answers at once.
"""

import argparse
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from npu_dra.domain.cdi import Mount


LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")
CLUSTERS = ("kubernetes", "memory")
PARTITION_MODES = ("none", "templates")
DEVICE_TAINTS = ("auto", "off")
# Each profile's real hardware backend, used when --hardware is empty.
REAL_BACKEND = {"npu": "npu_smi", "gpu": "nvml"}
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off", "")
KUBELET_CALL_TIMEOUT_S = 45.0  # the kubelet's DRA call timeout; an answer after it is lost
# The kubelet's gRPC probe dials the pod IP (the node's own, with hostNetwork).
HEALTHCHECK_HOST = "0.0.0.0"  # noqa: S104
# The one-shot commands print their answer; their log says only what went wrong, by default.
QUIET_COMMANDS = ("discover", "simulate")
QUIET_LOG_LEVEL = "warning"
# The simulation's allocation search bound per pod and node (domain/scheduling/allocator.py's
# DEFAULT_STEP_BUDGET; a unit test keeps the two equal without importing the scheduler here).
SEARCH_BUDGET = 200_000


@attrs.frozen
class Hardware:
    """`--hardware`: a real backend, or a fake node described in a file (or inline, for the
    simulation's nodes)."""

    kind: str  # "npu_smi" | "nvml" | "fake"; "" until the profile's backend is filled in
    fake_file: Path | None = None
    description: Mapping[str, Any] | None = attrs.field(default=None, eq=False)


class OptionError(ValueError):
    """Options that parse one by one but not together; the message names the flags."""


# -- parsers: each turns flag or env text into a value, or says what was expected ---------------


def hardware(text: str) -> Hardware:
    if text in ("", "npu-smi", "nvml"):
        return Hardware(text.replace("-", "_"))
    kind, _, file = text.partition(":")
    if kind != "fake" or not file:
        raise argparse.ArgumentTypeError(f"{text!r}: expected npu-smi, nvml or fake:FILE")
    return Hardware("fake", Path(file))


def one_of(choices: Sequence[str]) -> Callable[[str], str]:
    """Case-insensitive choice, checked for env values too (argparse's `choices` checks argv)."""

    def check(text: str) -> str:
        if text.lower() not in choices:
            raise argparse.ArgumentTypeError(f"{text!r}: expected one of {', '.join(choices)}")
        return text.lower()

    return check


def positive(convert: Callable[[str], Any], expected: str) -> Callable[[str], Any]:
    """A number above zero, or an error saying what was `expected`."""

    def check(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r}: expected {expected}")
        return value

    return check


positive_seconds = positive(float, "a positive number of seconds")
positive_int = positive(int, "a positive whole number")


def claim_fetch_timeout(text: str) -> float:
    value = float(positive_seconds(text))
    if value >= KUBELET_CALL_TIMEOUT_S:
        raise argparse.ArgumentTypeError(
            f"{text!r}: must be below the kubelet's {KUBELET_CALL_TIMEOUT_S:.0f}s call timeout"
        )
    return value


def port(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not -1 <= number <= 65535:
        raise argparse.ArgumentTypeError(
            f"{number}: expected -1 (off), 0 (any free port) or a port"
        )
    return number


def taint_effects(text: str) -> str:
    """`Word=Effect,...` over the default table (domain/device_taints.py), checked here."""
    from npu_dra.domain.device_taints import parse_taint_policy
    from npu_dra.domain.errors import DomainError

    try:
        parse_taint_policy(text)
    except DomainError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def switch(text: str) -> bool:
    if text.strip().lower() in TRUE_WORDS:
        return True
    if text.strip().lower() in FALSE_WORDS:
        return False
    raise argparse.ArgumentTypeError(f"{text!r}: expected true or false")


def driver_mounts(text: str) -> "tuple[Mount, ...]":
    """`/host[:/container],...`: each an absolute host path, optionally elsewhere inside."""
    from npu_dra.domain.cdi import Mount

    mounts = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, _, inside = item.partition(":")
        if not host.startswith("/") or (inside and not inside.startswith("/")):
            raise argparse.ArgumentTypeError(
                f"driver mount {item!r}: expected /host/path[:/container/path]"
            )
        mounts.append(Mount(host, inside or host))
    return tuple(mounts)


def optional_path(text: str) -> Path | None:
    return Path(text) if text else None


def this_host(text: str) -> str:
    """The node name; empty means this host's name, which is the kubelet's default too."""
    return text or socket.gethostname()


# -- the declarations ---------------------------------------------------------------------------


@attrs.frozen
class Option:
    dest: str
    flags: tuple[str, ...]  # the first is the name; the rest are aliases manifests still use
    help: str
    default: str  # text, parsed like a flag value
    parse: Callable[[str], Any] = str
    env: str | None = None
    metavar: str | None = None
    negatable: bool = False  # a switch: --x / --no-x

    @property
    def flag(self) -> str:
        return self.flags[0]


def _options() -> dict[str, Option]:
    def path(dest: str, flag: str, env: str, default: str, text: str, *alias: str) -> Option:
        return Option(dest, (flag, *alias), text, default, Path, env, "DIR")

    declared = (
        Option("node_name", ("--node-name",), "this node's name", "", this_host, "NODE_NAME"),
        Option(
            "device_profile",
            ("--device-profile",),
            "device profile: npu (Ascend NPUs) or gpu (NVIDIA GPUs)",
            "npu",
            one_of(tuple(REAL_BACKEND)),
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
        path(
            "sysfs_root",
            "--sysfs-root",
            "SYSFS_ROOT",
            "/sys",
            "sysfs mount (NUMA node of each chip's PCI device)",
        ),
        path(
            "dev_root",
            "--dev-root",
            "DEV_ROOT",
            "/dev",
            "host directory of the device nodes (/dev/davinciN): the CDI and DeviceSpec host path",
        ),
        path(
            "ascend_root",
            "--ascend-root",
            "ASCEND_ROOT",
            "/usr/local/Ascend",
            "Ascend install dir: driver/lib64 and driver/version.info are mounted read-only",
        ),
        path(
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
        path(
            "driver_root",
            "--driver-root",
            "DRIVER_ROOT",
            "/",
            "gpu profile: root of the NVIDIA driver install (nvidia-smi, libraries)",
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
        path("cdi_root", "--cdi-root", "CDI_ROOT", "/var/run/cdi", "CDI spec directory"),
        path(
            "registrar_dir",
            "--kubelet-registrar-directory-path",
            "KUBELET_REGISTRAR_DIRECTORY_PATH",
            "/var/lib/kubelet/plugins_registry",
            "where the kubelet looks for registration sockets",
        ),
        path(
            "plugins_dir",
            "--kubelet-plugins-directory-path",
            "KUBELET_PLUGINS_DIRECTORY_PATH",
            "/var/lib/kubelet/plugins",
            "parent of this plugin's data dir (DRA socket, checkpoint)",
        ),
        Option(
            "healthcheck_port",
            ("--healthcheck-port",),
            "grpc.health.v1 liveness port; -1 off, 0 any free port",
            "-1",
            port,
            "HEALTHCHECK_PORT",
            "PORT",
        ),
        Option(
            "kubeconfig",
            ("--kubeconfig",),
            "kubeconfig file; empty: the pod's in-cluster service account",
            "",
            env="KUBECONFIG",
            metavar="FILE",
        ),
        Option(
            "cluster",
            ("--cluster",),
            "cluster API; memory is an empty in-memory API for tests and demos only",
            "kubernetes",
            one_of(CLUSTERS),
        ),
        Option(
            "metrics_port",
            ("--metrics-port",),
            "Prometheus /metrics port; -1 off, 0 any free port",
            "-1",
            port,
            "METRICS_PORT",
            "PORT",
        ),
        Option(
            "device_taints",
            ("--device-taints",),
            "auto: unhealthy devices stay published with a device taint where the API server "
            "serves taints (DRADeviceTaints), else are left out; off: always left out",
            "auto",
            one_of(DEVICE_TAINTS),
            "DEVICE_TAINTS",
        ),
        Option(
            "taint_effects",
            ("--taint-effects",),
            "health word -> taint effect over the defaults Degraded=None,Unhealthy=NoSchedule,"
            "Critical=NoExecute,Unknown=NoSchedule (e.g. Critical=NoSchedule)",
            "",
            taint_effects,
            "TAINT_EFFECTS",
            "WORD=EFFECT,...",
        ),
        Option(
            "claim_fetch_timeout",
            ("--claim-fetch-timeout",),
            "seconds a prepare waits for the API server to return its claims, all together",
            "20",
            claim_fetch_timeout,
            "CLAIM_FETCH_TIMEOUT",
            "SECONDS",
        ),
        Option(
            "partitions",
            ("--partitions",),
            "none: whole chips only; templates: also publish each chip's vNPU template "
            "placements as partitionable devices (needs DRAPartitionableDevices)",
            "none",
            one_of(PARTITION_MODES),
            "PARTITIONS",
        ),
        path(
            "device_plugin_path",
            "--device-plugin-path",
            "DEVICE_PLUGIN_PATH",
            "/var/lib/kubelet/device-plugins",
            "the kubelet's device plugin directory (kubelet.sock and ours)",
        ),
        Option(
            "resource_name",
            ("--resource-name",),
            "override the resource names: NAME, or FAMILY=NAME,... per chip family",
            "",
            str.strip,
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
        Option(
            "log_level",
            ("--log-level",),
            "log level: debug, info, warning or error; empty: info for the plugins, warning "
            "for discover and simulate",
            "",
            one_of(("", *LOG_LEVELS)),
            "LOG_LEVEL",
        ),
        Option(
            "log_format",
            ("--log-format",),
            "text for people, json for log collectors",
            "text",
            one_of(LOG_FORMATS),
            "LOG_FORMAT",
        ),
        Option(
            "output",
            ("--output", "-o"),
            "yaml, json or table; empty: table for simulate, yaml for discover",
            "",
            one_of(("", "yaml", "json", "table")),
        ),
        Option(
            "scenario",
            ("--scenario",),
            "Kubernetes-shaped YAML of nodes, classes, claims and pods (default: built-in)",
            "",
            optional_path,
            metavar="FILE",
        ),
        Option(
            "generate",
            ("--generate",),
            "a generated scenario of identical nodes and NPU pods, for scale runs",
            "",
            metavar="nodes=N,npus=N,pods=N",
        ),
        Option(
            "search_budget",
            ("--search-budget",),
            "allocation search steps per pod and node before a pod is reported Undecided "
            "(kube-scheduler bounds the search by time instead: 10 s per node)",
            str(SEARCH_BUDGET),
            positive_int,
            metavar="STEPS",
        ),
        Option(
            "prepare",
            ("--prepare",),
            "run the node plugins' NodePrepareResources step (--no-prepare: allocate only)",
            "true",
            switch,
            negatable=True,
        ),
        Option(
            "cdi_out",
            ("--cdi-out",),
            "write the simulated CDI specs here (default: a temporary directory)",
            "",
            optional_path,
            metavar="DIR",
        ),
    )
    return {option.dest: option for option in declared}


OPTIONS = _options()

_HARDWARE = (
    *("node_name", "device_profile", "driver_name", "hardware", "npu_smi_path", "probe_timeout"),
    *("sysfs_root", "dev_root", "ascend_root", "dcmi_dir", "ascend_install_info", "driver_root"),
)
_LOGGING = ("log_level", "log_format")
COMMANDS: Mapping[str, tuple[str, ...]] = {
    "kubelet-plugin": (
        *_HARDWARE,
        *("registrar_dir", "plugins_dir", "cdi_root", "healthcheck_port", "kubeconfig"),
        *("cluster", "health_interval", "claim_fetch_timeout", "partitions"),
        *("metrics_port", "device_taints", "taint_effects"),
        *_LOGGING,
    ),
    "device-plugin": (
        *_HARDWARE,
        *("device_plugin_path", "resource_name", "health_interval", "cdi_enabled", "cdi_root"),
        *("driver_mounts", "metrics_port"),
        *_LOGGING,
    ),
    "discover": (*_HARDWARE, "output", *_LOGGING),
    "simulate": (
        *("scenario", "generate", "output", "search_budget", "prepare", "driver_name"),
        "cdi_out",
        *_LOGGING,
    ),
}


def add_options(
    parser: argparse.ArgumentParser, command: str, environ: Mapping[str, str] | None = None
) -> None:
    """The command's flags on `parser`, their defaults read from `environ` (os.environ)."""
    env = os.environ if environ is None else environ
    for dest in COMMANDS[command]:
        option = OPTIONS[dest]
        from_env = env.get(option.env) if option.env else None
        default = from_env if from_env is not None else option.default
        shown = [f"env {option.env}"] if option.env else []
        if option.default:
            shown.append(f"default {option.default}")
        text = f"{option.help} ({'; '.join(shown)})" if shown else option.help
        if option.negatable:
            # The default stays text until settings_from, so a bad env value is reported by
            # the command that reads it, not by every command's parser.
            parser.add_argument(
                *option.flags,
                dest=dest,
                action=argparse.BooleanOptionalAction,
                default=default,
                help=text,
            )
            continue
        parser.add_argument(
            *option.flags,
            dest=dest,
            default=default,
            type=option.parse,
            metavar=option.metavar,
            help=text.replace("%", "%%"),
        )


# -- typed settings -----------------------------------------------------------------------------


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
    health_interval: float
    cdi_root: Path
    registrar_dir: Path
    plugins_dir: Path
    healthcheck_port: int
    kubeconfig: str
    cluster: str
    claim_fetch_timeout: float
    partitions: str
    metrics_port: int
    device_taints: str
    taint_effects: str
    device_plugin_path: Path
    resource_name: str
    cdi_enabled: bool
    driver_mounts: "tuple[Mount, ...]"
    log_level: str
    log_format: str
    output: str
    scenario: Path | None
    generate: str
    search_budget: int
    prepare: bool
    cdi_out: Path | None
    # Not flags: where prepared claims live (the simulation keeps them in memory per node).
    state: str = "files"
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
    """Fill in what the profile decides: its driver name and its real backend."""
    from npu_dra.domain.profile import profile_named

    profile = profile_named(settings.device_profile)
    changes: dict[str, Any] = {}
    if not settings.driver_name:
        changes["driver_name"] = profile.default_driver
    if not settings.hardware.kind:
        changes["hardware"] = Hardware(REAL_BACKEND[profile.name])
    if not settings.log_level:
        changes["log_level"] = "info"
    backend = changes.get("hardware", settings.hardware).kind
    # A real backend finds one vendor's devices; under another profile they would get that
    # profile's names, attributes and CDI content (a GPU handed /dev/davinci0).
    if backend in REAL_BACKEND.values() and backend != REAL_BACKEND[profile.name]:
        served = next(name for name, real in REAL_BACKEND.items() if real == backend)
        raise OptionError(
            f"--hardware {backend.replace('_', '-')} finds {served} devices, not "
            f"{profile.name}: give --device-profile={served}"
        )
    return attrs.evolve(settings, **changes) if changes else settings
