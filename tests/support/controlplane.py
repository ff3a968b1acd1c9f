"""A real Kubernetes control plane on loopback for tests and benchmarks (a library, not a test
file; the session fixtures are in `k8s_fixtures`).

`ControlPlane` runs etcd, kube-apiserver, kube-controller-manager and kube-scheduler, built from
Kubernetes' own Go modules by ``tests/e2e/k8s/build.sh`` (`build_binaries`), with a throwaway
PKI made by the ``openssl`` CLI. No kubelet runs: `ControlPlane.create_ready_node` makes Node
objects the scheduler can place pods on. Every process runs in its own process group, is bound
to 127.0.0.1 only, and is torn down by `ControlPlane.stop`, by an atexit hook, and (should the
Python process be killed outright) by the kernel through ``PR_SET_PDEATHSIG``.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import datetime as dt
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

import yaml
from kubernetes import client, config
from kubernetes.client import ApiException

BUILD_SCRIPT = Path(__file__).resolve().parents[1] / "e2e" / "k8s" / "build.sh"
BUILD_TIMEOUT_S = float(os.environ.get("NPU_DRA_K8S_BUILD_TIMEOUT", "7200"))
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
BINARIES = (*COMPONENTS, "kubectl")
DEFAULT_VERSION = "v1.34.3"  # the floor: the oldest release the driver supports
CURRENT_VERSION = "v1.37.2"  # the current release
# The main flow runs on both ends (docs/kubernetes-versions.md); v1.36.3 only in the tests that
# prove what neither end does (its own gate defaults).
VERSIONS = (DEFAULT_VERSION, CURRENT_VERSION)
# Every version tests/e2e/k8s/build.sh builds (one go.mod each).
BUILT_VERSIONS = (DEFAULT_VERSION, "v1.36.3", CURRENT_VERSION)
GATE_APIS = {DEFAULT_VERSION: {"DRADeviceTaints": "resource.k8s.io/v1alpha3=true"}}
SERVICE_CIDR = "10.0.0.0/24"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
FRONT_PROXY_CLIENT = "front-proxy-client"
# Taints that the apiserver's TaintNodesByCondition admission puts on every new Node, and that
# only the node lifecycle controller (disabled here, see `ControlPlane._start_controller_manager`)
# would take off again.
NODE_CONDITION_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")

T = TypeVar("T")


class ControlPlaneError(RuntimeError):
    """A component failed to start or a control-plane helper failed; the message says why."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(
    probe: Callable[[], T | None],
    *,
    timeout: float,
    what: str,
    interval: float = 0.2,
    fatal: tuple[type[BaseException], ...] = (),
) -> T:
    """Calls `probe` until it returns something truthy and returns that; raises TimeoutError
    after `timeout` seconds.

    Exceptions raised by `probe` count as "not yet" (the last one is quoted in the timeout error),
    except those of the `fatal` types, which propagate at once.
    """
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            result = probe()
        except fatal:
            raise
        except Exception as error:
            last_error, result = error, None
        if result:
            return result
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_error!r})" if last_error is not None else ""
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}{detail}")
        time.sleep(interval)


def log_tail(path: Path, lines: int = 60) -> str:
    """The last `lines` lines of a log file (reads at most its last 256 KiB)."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 256 * 1024))
            data = handle.read().decode("utf-8", errors="replace")
    except OSError as error:
        return f"<cannot read {path}: {error}>"
    return "\n".join(data.splitlines()[-lines:])


# --- binaries ----------------------------------------------------------------------------------


def build_binaries(
    say: Callable[[str], None],
    *,
    script: Path = BUILD_SCRIPT,
    binaries: Sequence[str] = BINARIES,
    what: str = "control-plane",
    args: Sequence[str] = (),
) -> Path | str:
    """Runs build.sh (a moment when the binaries are cached, 20-40 minutes the first time on a
    small machine), passing each line of its progress to `say`; returns the binary directory, or
    why there is none. `script`, `binaries` and `what` name another such build (the node's);
    `args` go to the script (build.sh takes the Kubernetes version, v1.34.3 by default)."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            ["bash", str(script), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    except OSError as error:
        return f"cannot run {script}: {error}"
    assert process.stderr is not None
    assert process.stdout is not None
    stderr_tail: list[str] = []
    # stdout is one line (the directory), so reading stderr to its end first cannot deadlock.
    for raw in process.stderr:
        line = raw.rstrip("\n")
        stderr_tail = [*stderr_tail[-40:], line]
        say(line)
    try:
        stdout = process.stdout.read()
        code = process.wait(timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        return f"{script} ran over {BUILD_TIMEOUT_S:.0f}s"
    if code != 0:
        hint = ""
        if shutil.which("go") is None:
            hint = "\n`go` is not on PATH: install Go >= 1.26 (https://go.dev/dl/) to build them."
        return f"building the {what} binaries failed ({script} exited {code}){hint}\n" + "\n".join(
            stderr_tail
        )
    bin_dir = Path(stdout.strip().splitlines()[-1]) if stdout.strip() else Path()
    missing = [name for name in binaries if not os.access(bin_dir / name, os.X_OK)]
    if missing:
        return f"{script} printed {bin_dir!s}, which lacks {', '.join(missing)}"
    if stderr_tail:  # something was built: say how long it took
        say(f"done in {time.monotonic() - started:.0f}s: {bin_dir}")
    return bin_dir


# --- processes ---------------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1
try:  # resolved here, in the parent: dlopen in a freshly forked child could deadlock
    _PRCTL: Callable[..., int] | None = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: only stop() and atexit clean up
    _PRCTL = None


def die_with_parent(parent_pid: int) -> Callable[[], None]:
    """A preexec_fn that asks the kernel to SIGKILL the child when its parent goes away.

    This covers the case no Python code can: the test process killed with SIGKILL. (The kernel
    tracks the parent *thread*, so start control planes from a thread that outlives them, such as
    the main thread; pytest fixtures run there.)
    """

    def preexec() -> None:
        if _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


@dataclass
class _Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    log_handle: IO[bytes]

    @property
    def pid(self) -> int:
        return self.popen.pid

    def running(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float) -> None:
        """SIGTERM the process group, SIGKILL it after `grace` seconds, and reap the leader.

        The group is signalled only while its leader is unreaped, so the group id cannot have been
        reused by an unrelated process.
        """
        try:
            if self.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGTERM)
                try:
                    self.popen.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self.popen.pid, signal.SIGKILL)
                    self.popen.wait(timeout=30)
        finally:
            self.log_handle.close()


def _spawn(
    name: str, argv: Sequence[str], log: Path, env: Mapping[str, str] | None = None
) -> _Process:
    handle = log.open("ab")
    try:
        popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() signals the whole group
            preexec_fn=die_with_parent(os.getpid()),  # noqa: PLW1509 (only prctl, no locks)
            # never pick up a user kubeconfig
            env={**os.environ, "KUBECONFIG": os.devnull, **(env or {})},
        )
    except BaseException:
        handle.close()
        raise
    return _Process(name, popen, log, handle)


def pid_alive(pid: int) -> bool:
    """Whether `pid` names a live (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in {"Z", "X"}


# --- PKI ---------------------------------------------------------------------------------------

_OPENSSL_CONFIG = """\
[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,\
DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
"""


@dataclass(frozen=True)
class Pki:
    """Paths of the throwaway PKI files."""

    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    admin_cert: Path
    admin_key: Path
    proxy_client_cert: Path
    proxy_client_key: Path
    sa_key: Path
    sa_pub: Path


def _openssl(*args: str) -> None:
    result = subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ControlPlaneError(f"openssl {' '.join(args)} failed:\n{result.stderr}")


def generate_pki(directory: Path) -> Pki:
    """A CA, an apiserver serving cert, an admin client cert (O=system:masters), the
    aggregation layer's front-proxy client cert and an RSA service-account signing key pair,
    made with the openssl CLI into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    cnf = directory / "openssl.cnf"
    cnf.write_text(_OPENSSL_CONFIG)
    pki = Pki(
        ca_cert=directory / "ca.crt",
        ca_key=directory / "ca.key",
        serving_cert=directory / "serving.crt",
        serving_key=directory / "serving.key",
        admin_cert=directory / "admin.crt",
        admin_key=directory / "admin.key",
        proxy_client_cert=directory / "front-proxy-client.crt",
        proxy_client_key=directory / "front-proxy-client.key",
        sa_key=directory / "sa.key",
        sa_pub=directory / "sa.pub",
    )

    def ec_key(path: Path) -> None:
        _openssl(
            "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path)
        )
        path.chmod(0o600)

    ec_key(pki.ca_key)
    # fmt: off
    _openssl("req", "-x509", "-new", "-config", str(cnf), "-extensions", "ca",
             "-key", str(pki.ca_key), "-subj", "/CN=npu-dra-e2e-ca", "-days", "3650",
             "-out", str(pki.ca_cert))
    # fmt: on

    def leaf(key: Path, cert: Path, subject: str, extensions: str) -> None:
        ec_key(key)
        csr = cert.with_suffix(".csr")
        # fmt: off
        _openssl("req", "-new", "-config", str(cnf), "-key", str(key), "-subj", subject,
                 "-out", str(csr))
        _openssl("x509", "-req", "-in", str(csr), "-CA", str(pki.ca_cert),
                 "-CAkey", str(pki.ca_key), "-set_serial", "0x" + secrets.token_hex(16),
                 "-days", "365", "-extfile", str(cnf), "-extensions", extensions,
                 "-out", str(cert))
        # fmt: on
        csr.unlink()

    leaf(pki.serving_key, pki.serving_cert, "/CN=kube-apiserver", "server")
    leaf(pki.admin_key, pki.admin_cert, "/O=system:masters/CN=npu-dra-e2e-admin", "client")
    leaf(pki.proxy_client_key, pki.proxy_client_cert, f"/CN={FRONT_PROXY_CLIENT}", "client")
    _openssl(
        "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", str(pki.sa_key)
    )
    pki.sa_key.chmod(0o600)
    _openssl("pkey", "-in", str(pki.sa_key), "-pubout", "-out", str(pki.sa_pub))
    return pki


def issue_client_certificate(
    pki: Pki, directory: Path, name: str, subject: str
) -> tuple[Path, Path]:
    """A client certificate and key signed by the control plane's CA, e.g. a kubelet's
    (`/O=system:nodes/CN=system:node:<node>`); returns (certificate, key)."""
    directory.mkdir(parents=True, exist_ok=True)
    key, cert, csr = (directory / f"{name}.{ext}" for ext in ("key", "crt", "csr"))
    cnf = pki.ca_cert.parent / "openssl.cnf"
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key))
    key.chmod(0o600)
    _openssl(
        "req", "-new", "-config", str(cnf), "-key", str(key), "-subj", subject, "-out", str(csr)
    )
    # fmt: off
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(pki.ca_cert), "-CAkey", str(pki.ca_key),
             "-set_serial", "0x" + secrets.token_hex(16), "-days", "365", "-extfile", str(cnf),
             "-extensions", "client", "-out", str(cert))
    # fmt: on
    csr.unlink()
    return cert, key


def kubeconfig_text(server: str, ca_cert: Path, user_name: str, user: Mapping[str, str]) -> str:
    """A kubeconfig for `server` as `user` (client-certificate/-key, or token)."""
    return _kubeconfig(server, ca_cert, user_name, user)


def api_client_for(kubeconfig: Path) -> client.ApiClient:
    """A Kubernetes Python client for `kubeconfig`, never sent through an HTTP(S)_PROXY from the
    environment (the control plane is on loopback, which proxies cannot reach)."""
    configuration = client.Configuration()
    config.load_kube_config(  # type: ignore[no-untyped-call]
        config_file=str(kubeconfig), client_configuration=configuration, persist_config=False
    )
    configuration.proxy = None
    return client.ApiClient(configuration)


def _kubeconfig(server: str, ca_cert: Path, user_name: str, user: Mapping[str, str]) -> str:
    ca_data = base64.b64encode(ca_cert.read_bytes()).decode()
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "e2e", "cluster": {"server": server, "certificate-authority-data": ca_data}}
        ],
        "users": [{"name": user_name, "user": dict(user)}],
        "contexts": [{"name": user_name, "context": {"cluster": "e2e", "user": user_name}}],
        "current-context": user_name,
    }
    return yaml.safe_dump(document, sort_keys=False)


# --- the control plane -------------------------------------------------------------------------

_LIVE: list[ControlPlane] = []
_LIVE_LOCK = threading.Lock()


def stop_all() -> None:
    """Stops every control plane this process started and has not stopped (atexit, signals)."""
    with _LIVE_LOCK:
        planes = list(_LIVE)
    for plane in reversed(planes):
        plane.stop()


atexit.register(stop_all)


class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager + kube-scheduler on 127.0.0.1.

    ``ControlPlane(bin_dir, work_dir).start()`` returns once the apiserver is ready, the
    controller-manager and scheduler report healthy, and the controller-manager has made the
    ``default`` ServiceAccount; `stop` (also run at exit) leaves no process behind. Use it as a
    context manager or call `start`/`stop`.
    """

    def __init__(
        self,
        bin_dir: Path,
        work_dir: Path,
        *,
        start_timeout: float = 180.0,
        feature_gates: Mapping[str, bool] | None = None,
        component_args: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.bin_dir = Path(bin_dir)
        # build.sh caches each version under a directory named after it.
        self.version = self.bin_dir.name if self.bin_dir.name in BUILT_VERSIONS else DEFAULT_VERSION
        # Given to the apiserver, controller-manager and scheduler alike (e.g. DRADeviceTaints).
        self.feature_gates = dict(feature_gates or {})
        # Extra flags by component name, after the usual ones (a later flag wins), e.g. a
        # benchmark's {"kube-scheduler": ["--kube-api-qps=5000"]}.
        self.component_args = {name: tuple(a) for name, a in (component_args or {}).items()}
        self.work_dir = Path(work_dir)
        self.start_timeout = start_timeout
        self.log_dir = self.work_dir / "logs"
        self.kubeconfig = self.work_dir / "admin.kubeconfig"
        self.server = ""
        self.etcd_url = ""
        self.ports: dict[str, int] = {}
        self._processes: list[_Process] = []
        self._api_client: client.ApiClient | None = None
        self._pki: Pki | None = None
        missing = [name for name in BINARIES if not os.access(self.bin_dir / name, os.X_OK)]
        if missing:
            raise ControlPlaneError(
                f"{self.bin_dir} lacks {', '.join(missing)}; run {BUILD_SCRIPT}"
            )

    # lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> ControlPlane:
        """Starts every component and waits until the cluster can take work; raises
        `ControlPlaneError` (with the failing component's log tail) and cleans up on failure."""
        if self._processes:
            raise ControlPlaneError("already started")
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(exist_ok=True)
        with _LIVE_LOCK:
            _LIVE.append(self)
        deadline = time.monotonic() + self.start_timeout
        try:
            self._pki = generate_pki(self.work_dir / "pki")
            self._start_etcd(deadline)
            self._start_apiserver(deadline)
            self._start_controller_manager(deadline)
            self._start_scheduler(deadline)
            self._wait_for_cluster_basics(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, grace: float = 10.0) -> None:
        """Stops the components in reverse start order (SIGTERM, then SIGKILL after `grace`
        seconds, per process group). Safe to call more than once."""
        if self._api_client is not None:
            with contextlib.suppress(Exception):
                self._api_client.close()  # type: ignore[no-untyped-call]
            self._api_client = None
        try:
            while self._processes:
                self._processes[-1].stop(grace)
                self._processes.pop()
        finally:
            with _LIVE_LOCK:
                if self in _LIVE:
                    _LIVE.remove(self)

    @property
    def pids(self) -> dict[str, int]:
        """Component name to pid, for the processes started and not yet stopped."""
        return {process.name: process.pid for process in self._processes}

    @property
    def pki(self) -> Pki:
        if self._pki is None:
            raise ControlPlaneError("not started")
        return self._pki

    def log_path(self, component: str) -> Path:
        return self.log_dir / f"{component}.log"

    def log_tail(self, component: str, lines: int = 60) -> str:
        return log_tail(self.log_path(component), lines)

    # components --------------------------------------------------------------------------------

    def _api_flags(self) -> tuple[str, ...]:
        """The APIs a gate needs served: v1.34's DRADeviceTaints makes the scheduler and the
        controller-manager watch DeviceTaintRules (resource.k8s.io/v1alpha3, off by default),
        and they wait for that watch forever where the API server does not serve it."""
        apis = [
            api
            for gate, api in GATE_APIS.get(self.version, {}).items()
            if self.feature_gates.get(gate)
        ]
        return (f"--runtime-config={','.join(apis)}",) if apis else ()

    def _gate_flags(self) -> tuple[str, ...]:
        if not self.feature_gates:
            return ()
        gates = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.feature_gates.items()))
        return (f"--feature-gates={gates}",)

    def _spawn(self, name: str, *args: str) -> _Process:
        argv = [str(self.bin_dir / name), *args, *self.component_args.get(name, ())]
        process = _spawn(name, argv, self.log_path(name))
        self._processes.append(process)
        return process

    def _wait(
        self, process: _Process, probe: Callable[[], bool], what: str, deadline: float
    ) -> None:
        """Waits for `probe`; fails fast if the process exits, and quotes its log on failure."""

        def check() -> bool:
            if not process.running():
                raise ControlPlaneError(
                    f"{process.name} exited with status {process.popen.returncode} while waiting "
                    f"for {what}; last lines of {process.log}:\n{log_tail(process.log)}"
                )
            return probe()

        try:
            wait_for(
                check,
                timeout=max(0.0, deadline - time.monotonic()),
                what=what,
                fatal=(ControlPlaneError,),
            )
        except TimeoutError as error:
            raise ControlPlaneError(
                f"{process.name}: {error}; last lines of {process.log}:\n{log_tail(process.log)}"
            ) from None

    def _https_ok(self, port: int, path: str, *, client_cert: bool = False) -> bool:
        context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        if client_cert:
            context.load_cert_chain(str(self.pki.admin_cert), str(self.pki.admin_key))
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context)
        )
        with opener.open(f"https://127.0.0.1:{port}{path}", timeout=5) as response:
            return bool(response.status == 200)

    def _start_etcd(self, deadline: float) -> None:
        client_port, peer_port = free_port(), free_port()
        self.ports.update(etcd=client_port, etcd_peer=peer_port)
        self.etcd_url = f"http://127.0.0.1:{client_port}"
        peer_url = f"http://127.0.0.1:{peer_port}"
        process = self._spawn(
            "etcd",
            "--name=e2e",
            f"--data-dir={self.work_dir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=e2e={peer_url}",
            "--initial-cluster-state=new",
            "--unsafe-no-fsync",  # a throwaway cluster: durability buys nothing, fsync costs time
            "--log-level=warn",
        )

        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

        def healthy() -> bool:
            with opener.open(f"{self.etcd_url}/health", timeout=5) as response:
                return bool(json.load(response).get("health") == "true")

        self._wait(process, healthy, "etcd /health", deadline)

    def _start_apiserver(self, deadline: float) -> None:
        pki = self.pki
        port = free_port()
        # Its identity towards kubelets (exec, logs), signed by the CA the kubelets trust.
        kubelet_cert, kubelet_key = issue_client_certificate(
            pki, self.work_dir / "kube-apiserver", "kubelet-client",
            "/O=system:masters/CN=kube-apiserver-kubelet-client",
        )  # fmt: skip
        self.ports["kube-apiserver"] = port
        self.server = f"https://127.0.0.1:{port}"
        process = self._spawn(
            "kube-apiserver",
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={self.work_dir / 'kube-apiserver'}",
            f"--tls-cert-file={pki.serving_cert}",
            f"--tls-private-key-file={pki.serving_key}",
            f"--client-ca-file={pki.ca_cert}",
            "--authorization-mode=Node,RBAC",
            # NodeRestriction is off by default but on in every real cluster; it also limits what
            # a node identity may do with ResourceSlices, which the plugin tests depend on.
            "--enable-admission-plugins=NodeRestriction",
            f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
            f"--service-account-key-file={pki.sa_pub}",
            f"--service-account-signing-key-file={pki.sa_key}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            # The aggregation layer's front proxy, as in a real cluster. Without it the
            # controller-manager and scheduler log an error every few seconds for want of the
            # request-header CA in kube-system/extension-apiserver-authentication.
            f"--requestheader-client-ca-file={pki.ca_cert}",
            f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-uid-headers=X-Remote-Uid",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={pki.proxy_client_cert}",
            f"--proxy-client-key-file={pki.proxy_client_key}",
            # The "kubernetes" Service's endpoints would name 127.0.0.1, which Endpoints
            # validation rejects (and no pod runs that could use them): don't maintain them.
            "--endpoint-reconciler-type=none",
            "--allow-privileged=true",
            # `kubectl exec` and `logs` reach a real node's kubelet at its machine address (the
            # test node has no DNS name), as the apiserver's client.
            f"--kubelet-client-certificate={kubelet_cert}",
            f"--kubelet-client-key={kubelet_key}",
            "--kubelet-preferred-address-types=InternalIP",
            *self._gate_flags(),
            *self._api_flags(),
            "--profiling=false",
            "--v=2",
        )
        self._wait(
            process,
            lambda: self._https_ok(port, "/readyz", client_cert=True),
            "kube-apiserver /readyz",
            deadline,
        )
        self.kubeconfig.write_text(
            _kubeconfig(
                self.server,
                pki.ca_cert,
                "admin",
                {"client-certificate": str(pki.admin_cert), "client-key": str(pki.admin_key)},
            )
        )
        self.kubeconfig.chmod(0o600)

    def _start_controller_manager(self, deadline: float) -> None:
        pki = self.pki
        port = free_port()
        self.ports["kube-controller-manager"] = port
        process = self._spawn(
            "kube-controller-manager",
            f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--tls-cert-file={pki.serving_cert}",
            f"--tls-private-key-file={pki.serving_key}",
            f"--service-account-private-key-file={pki.sa_key}",
            f"--root-ca-file={pki.ca_cert}",
            f"--cluster-signing-cert-file={pki.ca_cert}",
            f"--cluster-signing-key-file={pki.ca_key}",
            "--use-service-account-credentials=true",
            # Every default controller (the resourceclaim controller that turns
            # ResourceClaimTemplates into ResourceClaims included) except the node lifecycle
            # controller. No kubelet runs, so ~50s after a Node's last status update that
            # controller sets its Ready condition to Unknown and taints it
            # node.kubernetes.io/unreachable (seen happen here), and the scheduler stops placing
            # pods on it. A heartbeat thread could keep status and Lease fresh, but it races the
            # controller's grace period on a loaded 2-core machine and stalls with a busy GIL or
            # a paused debugger; with the controller off, a Node stays exactly as a test made it.
            "--controllers=*,-node-lifecycle-controller",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--leader-elect=false",
            *self._gate_flags(),
            "--profiling=false",
            "--v=2",
        )
        self._wait(
            process,
            lambda: self._https_ok(port, "/healthz"),
            "controller-manager /healthz",
            deadline,
        )

    def _start_scheduler(self, deadline: float) -> None:
        pki = self.pki
        port = free_port()
        self.ports["kube-scheduler"] = port
        process = self._spawn(
            "kube-scheduler",
            f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--tls-cert-file={pki.serving_cert}",
            f"--tls-private-key-file={pki.serving_key}",
            "--leader-elect=false",
            *self._gate_flags(),
            "--profiling=false",
            "--v=2",
        )
        # /readyz also waits for the scheduler's informers to sync, so pods created afterwards
        # are seen at once.
        self._wait(process, lambda: self._https_ok(port, "/readyz"), "scheduler /readyz", deadline)

    def _wait_for_cluster_basics(self, deadline: float) -> None:
        """The controller-manager made the default ServiceAccount (pods can't be admitted
        without one) and published kube-root-ca.crt: its controllers and credentials work."""
        core = client.CoreV1Api(self.api_client)
        [kcm] = [
            process for process in self._processes if process.name == "kube-controller-manager"
        ]

        def basics() -> bool:
            core.read_namespaced_service_account("default", "default")
            core.read_namespaced_config_map("kube-root-ca.crt", "default")
            return True

        self._wait(kcm, basics, "the default ServiceAccount and kube-root-ca.crt", deadline)

    # API helpers -------------------------------------------------------------------------------

    @property
    def api_client(self) -> client.ApiClient:
        """A Kubernetes Python client authenticated as the cluster admin."""
        api = self._api_client
        if api is None:
            if not self.kubeconfig.exists():
                raise ControlPlaneError("not started")
            api = self._api_client = api_client_for(self.kubeconfig)
        return api

    def as_json(self, model: object) -> dict[str, Any]:
        """A client model as the API's JSON (camelCase keys), for plain dict access in tests."""
        serialize: Callable[[object], dict[str, Any]] = self.api_client.sanitize_for_serialization
        return serialize(model)

    def kubectl(
        self,
        *args: str,
        check: bool = True,
        input: str | None = None,
        timeout: float = 120.0,
        kubeconfig: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Runs the built kubectl as the admin (or with `kubeconfig`); raises `ControlPlaneError`
        with its stderr when it fails and `check` is true."""
        argv = [
            str(self.bin_dir / "kubectl"),
            f"--kubeconfig={kubeconfig or self.kubeconfig}",
            *args,
        ]
        result = subprocess.run(
            argv, input=input, capture_output=True, text=True, timeout=timeout, check=False
        )
        if check and result.returncode != 0:
            raise ControlPlaneError(
                f"kubectl {' '.join(args)} exited {result.returncode}:\n"
                f"{result.stderr}{result.stdout}"
            )
        return result

    def create_namespace(self, name: str, *, timeout: float = 60.0) -> str:
        """Creates namespace `name` and waits for its default ServiceAccount (the
        ServiceAccount admission plugin rejects pods until the controller made it)."""
        core = client.CoreV1Api(self.api_client)
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
        wait_for(
            lambda: core.read_namespaced_service_account("default", name),
            timeout=timeout,
            what=f"ServiceAccount {name}/default",
        )
        return name

    def delete_namespace(self, name: str) -> None:
        """Deletes namespace `name`, first force-deleting its pods (without a kubelet a bound
        pod never finishes a graceful deletion, which would hold the namespace forever)."""
        core = client.CoreV1Api(self.api_client)
        for pod in core.list_namespaced_pod(name).items:
            with contextlib.suppress(ApiException):
                core.delete_namespaced_pod(_name(pod.metadata), name, grace_period_seconds=0)
        with contextlib.suppress(ApiException):
            core.delete_namespace(name)

    def create_ready_node(
        self,
        name: str,
        labels: Mapping[str, str] | None = None,
        *,
        allocatable: Mapping[str, str] | None = None,
        taints: Iterable[client.V1Taint] = (),
    ) -> client.V1Node:
        """Creates Node `name` as a kubelet would register it, marks it Ready through the status
        subresource and lifts the not-ready taint, so the scheduler places pods on it.

        Nothing refreshes the status later: the node lifecycle controller is off (see
        `_start_controller_manager`), so the Node stays Ready for the life of the cluster.
        """
        core = client.CoreV1Api(self.api_client)
        all_labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            **(labels or {}),
        }
        node = client.V1Node(
            metadata=client.V1ObjectMeta(name=name, labels=all_labels),
            spec=client.V1NodeSpec(taints=list(taints) or None),
        )
        core.create_node(node)
        resources = {"cpu": "8", "memory": "32Gi", "pods": "110", **(allocatable or {})}
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "e2e: no kubelet runs; the test set this status",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
        status = {
            "status": {
                "capacity": resources,
                "allocatable": resources,
                "conditions": [ready],
                "addresses": [
                    {"type": "InternalIP", "address": "127.0.0.1"},
                    {"type": "Hostname", "address": name},
                ],
                "nodeInfo": {
                    "kubeletVersion": self.version,
                    "operatingSystem": "linux",
                    "architecture": "amd64",
                },
            }
        }
        merge = "application/merge-patch+json"
        core.patch_node_status(name, status, _content_type=merge)
        self.lift_condition_taints(name)
        return core.read_node(name)

    def lift_condition_taints(self, name: str) -> None:
        """What the node lifecycle controller (off here) does once a Node is Ready: take off the
        not-ready taints the API server's admission added, under optimistic concurrency (other
        taints stay); controllers such as the TTL controller update new Nodes too, so a conflict
        means "read again", not failure."""
        core = client.CoreV1Api(self.api_client)
        for _attempt in range(20):
            current = self.as_json(core.read_node(name))
            taints = current.get("spec", {}).get("taints") or []
            kept = [taint for taint in taints if taint["key"] not in NODE_CONDITION_TAINTS]
            if kept == taints:
                return
            spec_patch = {
                "metadata": {"resourceVersion": current["metadata"]["resourceVersion"]},
                "spec": {"taints": kept or None},
            }
            try:
                core.patch_node(name, spec_patch, _content_type="application/merge-patch+json")
                return
            except ApiException as error:
                if error.status != 409:
                    raise
        raise ControlPlaneError(f"could not lift the not-ready taint of Node {name}")

    def service_account_kubeconfig(
        self,
        namespace: str,
        name: str,
        *,
        expiration_seconds: int = 3600,
        audiences: Sequence[str] | None = None,
        bound_object: client.V1BoundObjectReference | None = None,
        create: bool = True,
    ) -> Path:
        """A kubeconfig that authenticates as ServiceAccount `namespace`/`name` with a token from
        the TokenRequest API (optionally bound to a Pod, Secret or Node via `bound_object`).
        Creates the ServiceAccount when `create` and it does not exist. It has no rights but
        those RBAC grants it."""
        core = client.CoreV1Api(self.api_client)
        if create:
            try:
                core.create_namespaced_service_account(
                    namespace,
                    client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=name)),
                )
            except ApiException as error:
                if error.status != 409:
                    raise
        request = client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(
                audiences=list(audiences) if audiences else [],
                expiration_seconds=expiration_seconds,
                bound_object_ref=bound_object,
            )
        )
        status = core.create_namespaced_service_account_token(name, namespace, request).status
        token = status.token if status else None
        if not token:
            raise ControlPlaneError(f"TokenRequest for {namespace}/{name} returned no token")
        path = self.work_dir / "kubeconfigs" / f"{namespace}.{name}.kubeconfig"
        path.parent.mkdir(exist_ok=True)
        path.write_text(
            _kubeconfig(self.server, self.pki.ca_cert, f"{namespace}.{name}", {"token": token})
        )
        path.chmod(0o600)
        return path


def _name(metadata: client.V1ObjectMeta | None) -> str:
    if metadata is None or not metadata.name:
        raise ControlPlaneError("an object without a name")
    return str(metadata.name)
