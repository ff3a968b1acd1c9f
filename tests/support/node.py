"""A real Kubernetes node on this machine: kubelet v1.34.3 + containerd 2.1 + runc (a library
beside `ControlPlane`; the fixtures are in `node_fixtures`).

`RealNode(plane, ...).start()` starts containerd with CRI, CDI (`cdi_spec_dirs` = the plugin's
CDI root) and a CNI network, imports the locally built images (no registry is reachable), starts
the kubelet registered to the control plane with a client certificate from its PKI, and waits
until the Node is Ready. The kubelet uses the standard paths (`/var/lib/kubelet`, its
`plugins_registry` and `plugins`, `/var/run/cdi`) because deploy/manifests' DaemonSet mounts
exactly those, so only one real node runs on a machine at a time (a lock file says so).

Everything runs in its own process group and dies with the test process; containers and their
shims, which containerd detaches on purpose, are removed by `stop` and, should the test process
be killed outright, by a reaper process (see `node_teardown`).

Facts this relies on, verified here: processes lack CAP_SYS_RESOURCE, so containerd is told to
`restrict_oom_score_adj`; CRI resolves an imported `local/x:1` as `docker.io/local/x:1`; the
kubelet advertises the machine's own address (it refuses a loopback node IP), so tests read
container output from the kubelet's pod log files or through containerd's socket, never through
the API server's proxy to the kubelet.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from kubernetes import client

from tests.support.containerd_config import ContainerdPaths, containerd_config, major_version
from tests.support.controlplane import (
    ControlPlane,
    ControlPlaneError,
    _Process,
    _spawn,
    free_port,
    issue_client_certificate,
    kubeconfig_text,
    log_tail,
    wait_for,
)
from tests.support.node_teardown import OWNER_MARKER, NodeLayout, teardown
from tests.support.oci_image import (
    ImageConfig,
    busybox_rootfs,
    layer_from_directory,
    write_docker_archive,
)

REPO = Path(__file__).resolve().parents[2]
NODE_BUILD_SCRIPT = REPO / "tests" / "e2e" / "node" / "build.sh"
NODE_BINARIES = ("containerd", "containerd-shim-runc-v2", "ctr", "pause")
KUBELET_ROOT = Path("/var/lib/kubelet")
CDI_ROOT = Path("/var/run/cdi")
NETNS_DIR = Path("/var/run/netns")
LOCK_FILE = Path("/run/npu-dra-e2e-real-node.lock")
EXEC_END = "npu-dra-e2e-exec-end"  # the last line of every exec's output (RealNode.exec)
EXEC_ATTEMPTS = 3
CNI_BIN_DIR = Path("/usr/lib/cni")
K8S_NAMESPACE = "k8s.io"  # containerd namespace the CRI uses
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
# The seed's business pods name ubuntu:22.04 (IfNotPresent); no registry is reachable, so the
# tests import a local stand-in under that name: a busybox userland with sh, ls, cat, sleep.
SEED_IMAGE = "docker.io/library/ubuntu:22.04"
POD_CIDR = "10.88.0.0/24"
READY_TIMEOUT_S = 120.0


class NodeError(ControlPlaneError):
    """The node could not start or do what a test asked; the message carries the logs' tails."""


def runc_binary() -> str:
    found = shutil.which("runc")
    if found is None:
        raise NodeError(
            "runc is not installed (Debian: apt-get install runc; tests/e2e/node/build.sh does)"
        )
    return found


class RealNode:
    def __init__(
        self,
        plane: ControlPlane | None,
        *,
        k8s_bin: Path,
        node_bin: Path,
        name: str,
        work_dir: Path,
        images_dir: Path,
        kubelet_root: Path = KUBELET_ROOT,
        cdi_root: Path = CDI_ROOT,
    ) -> None:
        self.plane = plane
        self.k8s_bin = k8s_bin
        self.node_bin = node_bin
        self.name = name
        self.work_dir = work_dir
        self.images_dir = images_dir
        self.kubelet_root = kubelet_root
        self.cdi_root = cdi_root
        self.log_dir = work_dir / "logs"
        self.pod_logs = work_dir / "pod-logs"
        self.containerd_dir = Path(tempfile.mkdtemp(prefix="ctrd-", dir="/run"))  # short socket
        (self.containerd_dir / OWNER_MARKER).write_text("made by the npu-dra e2e tests\n")
        self.address = str(self.containerd_dir / "containerd.sock")
        self.runc_root = self.containerd_dir / "runc"
        self._kubelet: _Process | None = None
        self._containerd: _Process | None = None
        self._lock: IO[str] | None = None
        self._reaper: subprocess.Popen[bytes] | None = None
        self._netns_before = (
            tuple(p.name for p in NETNS_DIR.iterdir()) if NETNS_DIR.is_dir() else ()
        )

    @property
    def control_plane(self) -> ControlPlane:
        if self.plane is None:
            raise NodeError("this node was started without a control plane (start_runtime)")
        return self.plane

    # lifecycle -----------------------------------------------------------------------------

    def start(self) -> RealNode:
        self.start_runtime()
        try:
            self._write_kubelet_files()
            self.start_kubelet()
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def start_runtime(self) -> RealNode:
        """containerd with the images imported, and the reaper: the node without its kubelet."""
        self._take_lock()
        try:
            self._prepare_dirs()
            self._start_reaper()
            self._start_containerd()
            self.import_images(self.images_dir)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stops the kubelet and containerd, removes every container, shim, mount and network
        namespace the node made, and deletes its Node object."""
        for process in (self._kubelet, self._containerd):
            if process is not None:
                process.stop(grace=10)
        self._kubelet = self._containerd = None
        problems = teardown(self.layout())
        if self._reaper is not None:
            assert self._reaper.stdin is not None
            self._reaper.stdin.close()
            self._reaper.wait(timeout=60)
            self._reaper = None
        with contextlib.suppress(Exception):
            if self.plane is not None:
                client.CoreV1Api(self.plane.api_client).delete_node(self.name)
        for directory in (self.kubelet_root, self.containerd_dir):
            shutil.rmtree(directory, ignore_errors=True)
        if self._lock is not None:
            self._lock.close()
            self._lock = None
        if problems:
            raise NodeError("node teardown left: " + "; ".join(problems))

    def layout(self) -> NodeLayout:
        return NodeLayout(
            containerd_address=self.address,
            runc_root=str(self.runc_root),
            runc_binary=runc_binary(),
            mount_roots=(str(self.kubelet_root), str(self.containerd_dir), str(self.work_dir)),
            netns_dir=str(NETNS_DIR),
            netns_before=self._netns_before,
            pids=tuple(p.pid for p in (self._kubelet, self._containerd) if p is not None),
            owned_dirs=(str(self.kubelet_root), str(self.containerd_dir)),
        )

    def _take_lock(self) -> None:
        handle = LOCK_FILE.open("w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            handle.close()
            raise NodeError(
                f"another real node runs on this machine ({LOCK_FILE} is locked)"
            ) from error
        self._lock = handle

    def _prepare_dirs(self) -> None:
        for directory in (self.log_dir, self.pod_logs, self.cdi_root):
            directory.mkdir(parents=True, exist_ok=True)
        if self.kubelet_root.exists():
            # Left by a killed run of these tests (the reaper unmounted it): nothing else of ours
            # runs (we hold the lock). A kubelet root we did not make is never deleted.
            if not (self.kubelet_root / OWNER_MARKER).exists():
                raise NodeError(
                    f"{self.kubelet_root} exists and is not the e2e node's: this machine looks "
                    "like a real Kubernetes node; run the real-node tests elsewhere"
                )
            teardown(dataclasses.replace(self.layout(), owned_dirs=()))
            shutil.rmtree(self.kubelet_root)
        self.kubelet_root.mkdir(parents=True)
        (self.kubelet_root / OWNER_MARKER).write_text("made by the npu-dra e2e tests\n")
        self._layout_file().write_text(self.layout().to_json())

    def _layout_file(self) -> Path:
        return self.work_dir / "node-layout.json"

    def _start_reaper(self) -> None:
        self._reaper = subprocess.Popen(
            [sys.executable, "-m", "tests.support.node_teardown", str(self._layout_file())],
            stdin=subprocess.PIPE,
            stdout=(self.log_dir / "reaper.log").open("ab"),
            stderr=subprocess.STDOUT,
            cwd=REPO,
            start_new_session=True,  # outlives the test process on purpose
        )

    # containerd ----------------------------------------------------------------------------

    def _start_containerd(self) -> None:
        config = self.containerd_dir / "config.toml"
        config.write_text(self._containerd_config())
        cni = self.work_dir / "cni"
        cni.mkdir(exist_ok=True)
        (cni / "10-e2e.conflist").write_text(json.dumps(self._cni_config(), indent=1))
        env_path = f"{self.node_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        self._containerd = self._spawn(
            "containerd", [str(self.node_bin / "containerd"), f"--config={config}"], path=env_path
        )
        self._write_layout()

        def ready() -> bool:
            return self.ctr("version", check=False).returncode == 0

        self._wait(self._containerd, ready, "containerd answering on its socket", 60)

    def _containerd_config(self) -> str:
        paths = ContainerdPaths(
            root=self.containerd_dir / "root",
            state=self.containerd_dir / "state",
            address=self.address,
            cdi_root=self.cdi_root,
            pause_image=PAUSE_IMAGE,
            runc=runc_binary(),
            runc_root=self.runc_root,
            cni_bin_dir=CNI_BIN_DIR,
            cni_conf_dir=self.work_dir / "cni",
        )
        return containerd_config(major_version(self.node_bin / "containerd"), paths)

    @staticmethod
    def _cni_config() -> dict[str, Any]:
        """A point-to-point veth per pod with an address from host-local IPAM: pods get an IP
        (the kubelet needs one for non-hostNetwork pods) and nothing is routed off the machine."""
        return {
            "cniVersion": "1.0.0",
            "name": "npu-dra-e2e",
            "plugins": [
                {
                    "type": "ptp",
                    "ipMasq": False,
                    "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_CIDR}]]},
                },
                {"type": "loopback"},
            ],
        }

    def ctr(
        self, *args: str, check: bool = True, timeout: float = 120.0
    ) -> subprocess.CompletedProcess[str]:
        argv = [str(self.node_bin / "ctr"), f"--address={self.address}", "-n", K8S_NAMESPACE, *args]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        if check and result.returncode != 0:
            raise NodeError(f"ctr {' '.join(args)} exited {result.returncode}: {result.stderr}")
        return result

    def import_images(self, directory: Path) -> list[str]:
        archives = sorted(directory.glob("*.tar"))
        for archive in archives:
            self.ctr("images", "import", "--no-unpack=false", str(archive), timeout=600)
        return [a.name for a in archives]

    def exec(self, container_id: str, *argv: str, timeout: float = 60.0) -> str:
        """Runs `argv` in a running container through containerd; returns its stdout.

        The command runs under `sh` with an end marker after it, and a reply without the marker
        is asked again: `ctr task exec` of containerd 2.1.5 can lose a command's output and
        still exit 0 (once the exit status arrives it deletes the process, whose Cancel closes
        the stdout FIFO's read end before its copy has drained it; containerd's later "ctr:
        drain exec output before cleanup"). That is the likeliest reading of the one run, under
        load, in which a pod's `ls /dev` came back empty: the driver answers every prepare with
        the device's CDI id, and containerd refuses to start a container whose CDI device it
        cannot resolve. (700 execs under CPU load did not lose one, so it stays a reading.)
        With the marker, an empty listing can only be the container's own /dev."""
        wrapped = ("sh", "-c", f'"$@"; status=$?; echo "{EXEC_END} $status"; exit $status', "sh")
        for _attempt in range(EXEC_ATTEMPTS):
            result = self.ctr(
                "task",
                "exec",
                f"--exec-id=e2e-{secrets.token_hex(4)}",
                container_id,
                *wrapped,
                *argv,
                check=False,
                timeout=timeout,
            )
            body, marker, _status = result.stdout.rpartition(f"{EXEC_END} ")
            if result.returncode != 0:
                raise NodeError(
                    f"exec {list(argv)} in {container_id[:12]} exited {result.returncode}:\n"
                    f"{body if marker else result.stdout}{result.stderr}"
                )
            if marker:
                return body
            print(f"[real node] ctr lost the output of {list(argv)} in {container_id[:12]}; again")
        raise NodeError(f"ctr lost the output of {list(argv)} {EXEC_ATTEMPTS} times running")

    # kubelet -------------------------------------------------------------------------------

    def _write_kubelet_files(self) -> None:
        pki = self.control_plane.pki
        directory = self.work_dir / "kubelet"
        cert, key = issue_client_certificate(
            pki, directory, "kubelet-client", f"/O=system:nodes/CN=system:node:{self.name}"
        )
        (directory / "kubeconfig").write_text(
            kubeconfig_text(
                self.control_plane.server,
                pki.ca_cert,
                f"system:node:{self.name}",
                {"client-certificate": str(cert), "client-key": str(key)},
            )
        )
        self.healthz_port = free_port()
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            # The machine's address, which the node advertises, so that the API server reaches
            # it for `kubectl exec` and `logs` (x509 clients of the cluster's CA only).
            "address": "0.0.0.0",
            "port": free_port(),
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": self.healthz_port,
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": False},
                "x509": {"clientCAFile": str(pki.ca_cert)},
            },
            "authorization": {"mode": "AlwaysAllow"},
            "cgroupDriver": "cgroupfs",
            "failSwapOn": False,
            "containerRuntimeEndpoint": f"unix://{self.address}",
            "podLogsDir": str(self.pod_logs),
            "resolvConf": "/etc/resolv.conf",
            "clusterDomain": "cluster.local",
            "serializeImagePulls": False,
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            # A shared build machine's disk is often past the default thresholds: never evict.
            "evictionHard": {
                "memory.available": "1Mi",
                "nodefs.available": "0%",
                "imagefs.available": "0%",
                "nodefs.inodesFree": "0%",
            },
            "syncFrequency": "10s",
            "fileCheckFrequency": "5s",
            "nodeStatusUpdateFrequency": "5s",
            "rotateCertificates": False,
            "serverTLSBootstrap": False,
            "protectKernelDefaults": False,
            "registerNode": True,
            # 1.35+ refuses a cgroup v1 host unless told (the field exists since 1.31).
            "failCgroupV1": False,
        }
        (directory / "config.yaml").write_text(json.dumps(config, indent=1))

    def start_kubelet(self) -> None:
        directory = self.work_dir / "kubelet"
        self._kubelet = self._spawn(
            "kubelet",
            [
                str(self.k8s_bin / "kubelet"),
                f"--config={directory / 'config.yaml'}",
                f"--kubeconfig={directory / 'kubeconfig'}",
                f"--root-dir={self.kubelet_root}",
                f"--cert-dir={directory / 'pki'}",
                f"--hostname-override={self.name}",
                "--v=3",  # "Registered DRA plugin" is logged at 3
                # The DRA client's calls, and (1.37+) which health service it watches over:
                # "Starting WatchResources stream" healthService=..., logged at 4 (kubernetes
                # v1.37.2 pkg/kubelet/cm/dra/plugin/dra_plugin.go `NodeWatchResources`).
                "--vmodule=dra_plugin=4",
            ],
        )
        self._write_layout()
        self._wait(self._kubelet, self._healthz_ok, "kubelet /healthz", 60)

    def stop_kubelet(self, *, kill: bool = False) -> None:
        """Stops the kubelet (SIGKILL with `kill`); pods and containers keep running."""
        if self._kubelet is None:
            return
        self._kubelet.stop(grace=0 if kill else 10)
        self._kubelet = None
        self._write_layout()

    def kubelet_log(self, lines: int = 80) -> str:
        return log_tail(self.log_dir / "kubelet.log", lines)

    def containerd_log(self, lines: int = 60) -> str:
        return log_tail(self.log_dir / "containerd.log", lines)

    def _healthz_ok(self) -> bool:
        import urllib.request

        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{self.healthz_port}/healthz", timeout=5) as response:
            return bool(response.status == 200)

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        core = client.CoreV1Api(self.control_plane.api_client)

        def ready() -> bool:
            node = core.read_node(self.name)
            conditions = (node.status.conditions or []) if node.status else []
            return any(c.type == "Ready" and c.status == "True" for c in conditions)

        try:
            wait_for(ready, timeout=timeout, what=f"Node {self.name} Ready")
        except Exception as error:
            raise NodeError(f"{error}\n--- kubelet:\n{self.kubelet_log()}") from error
        self.control_plane.lift_condition_taints(self.name)

    # pods ------------------------------------------------------------------------------------

    def pod_log(self, namespace: str, pod: str, lines: int = 60) -> str:
        """The last `lines` of the pod's container output as the kubelet wrote it (CRI log format,
        content only), every container and restart in file order."""
        content = []
        for path in sorted(self.pod_logs.glob(f"{namespace}_{pod}_*/*/*.log")):
            for line in path.read_text(errors="replace").splitlines():
                parts = line.split(" ", 3)
                content.append(parts[3] if len(parts) == 4 else line)
        return "\n".join(content[-lines:])

    def container_id(self, namespace: str, pod: str, container: str | None = None) -> str:
        status = (
            client.CoreV1Api(self.control_plane.api_client)
            .read_namespaced_pod(pod, namespace)
            .status
        )
        for item in (status.container_statuses or []) if status else []:
            if (container is None or item.name == container) and item.container_id:
                return str(item.container_id).split("://", 1)[1]
        raise NodeError(f"pod {namespace}/{pod} has no running container {container or ''}")

    # helpers ---------------------------------------------------------------------------------

    def _spawn(self, name: str, argv: Sequence[str], *, path: str | None = None) -> _Process:
        return _spawn(name, argv, self.log_dir / f"{name}.log", {"PATH": path} if path else None)

    def _write_layout(self) -> None:
        self._layout_file().write_text(self.layout().to_json())

    def _wait(
        self, process: _Process, check: Callable[[], bool], what: str, timeout: float
    ) -> None:
        deadline = time.monotonic() + timeout
        last: BaseException | None = None
        while time.monotonic() < deadline:
            if not process.running():
                raise NodeError(
                    f"{process.name} exited while waiting for {what}:\n{log_tail(process.log)}"
                )
            try:
                if check():
                    return
            except Exception as error:  # not up yet
                last = error
            time.sleep(0.2)
        raise NodeError(f"timed out waiting for {what} ({last}):\n{log_tail(process.log)}")


# images ----------------------------------------------------------------------------------------


def build_images(directory: Path, node_bin: Path) -> Path:
    """The node's images as docker archives in `directory` (rewritten each time: seconds): the
    sandbox image (cmd/pause) and the seed's business image stand-in (busybox)."""
    directory.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="images-", dir=directory))
    try:
        pause_root = work / "pause"
        pause_root.mkdir()
        shutil.copy2(node_bin / "pause", pause_root / "pause")
        _archive(
            directory / "pause.tar", PAUSE_IMAGE, pause_root, ImageConfig(entrypoint=["/pause"])
        )
        seed_root = busybox_rootfs(work / "busybox")
        _archive(directory / "seed-ubuntu.tar", SEED_IMAGE, seed_root, ImageConfig(cmd=["sh"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return directory


def _archive(path: Path, tag: str, root: Path, config: ImageConfig) -> None:
    write_docker_archive(path, tag=tag, layer=layer_from_directory(root), config=config)
