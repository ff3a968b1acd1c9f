"""The two kubelet plugins that benchmarks/vs_go.py compares, each run as the DaemonSet would run
it: npu-dra's `kubelet-plugin` on a fake 910B4 node (fake npu-smi, /dev and /sys), and Kubernetes'
own DRA test driver (k8s.io/kubernetes/test/e2e/dra/test-driver, on the kubeletplugin helper)
built by tests/e2e/k8s/build-test-driver.sh. Both get a fresh scratch host per start, run in their
own session, die with this process and are stopped with SIGTERM (SIGKILL after a grace)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.plugin_process import DRIVER as NPU_DRIVER
from tests.e2e.plugin_process import fake_node, spawn_plugin, stop_group
from tests.support.controlplane import free_port, log_tail

GO_DRIVER = "test-driver.cdi.k8s.io"  # the test driver's default --drivername
DEVICES = 8
# The Go driver's client rate limit (defaults 50 QPS, burst 100) is raised so that both plugins'
# own work is compared, not client-go's token bucket; npu-dra's client has no such limit.
GO_QPS, GO_BURST = 2000, 4000
NPU_HEALTH_INTERVAL_S = 10.0  # npu-dra's default hardware re-probe, kept for the idle figure
STOP_GRACE_S = 20.0


@dataclass
class Running:
    """One started plugin: its process, where its registration socket appears, what it serves."""

    label: str
    driver: str
    devices: tuple[str, ...]
    registry: Path
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def running(self) -> bool:
        return self.popen.poll() is None

    def tail(self) -> str:
        return log_tail(self.log, 30)

    def stop(self) -> None:
        stop_group(self.popen)


PER_POD = "npu-dra deployed"  # its label: the chart's default configuration (below)
# The chart's kubelet-plugin DaemonSet (deploy/manifests/50-daemonset.yaml), which the deployed
# contender names: it is not created, so the plugin watches for it as for a deleted one.
CHART_DAEMONSET = "ascend-npu-dra-kubeletplugin"


def deployed_flags(node_uid: str, health_port: int) -> list[str]:
    """What the chart's defaults add to the node's flags (deploy/helm/npu-dra/values.yaml,
    rendered as deploy/manifests/50-daemonset.yaml): `--hardware auto` (DCMI where libdcmi.so
    loads, else npu-smi: here npu-smi), the liveness port, `--seamless-upgrade auto` with the
    pod's UID (per-pod sockets on a 1.33+ kubelet, asked of the Node's kubeletVersion) and the
    DaemonSet watched for an uninstall. Sharing and vNPUs stay off, as there."""
    return [
        "--hardware=auto",
        f"--healthcheck-port={health_port}",
        "--seamless-upgrade=auto",
        f"--pod-uid={node_uid}",
        f"--daemonset-name={CHART_DAEMONSET}",
        "--pod-namespace=default",
    ]


@contextlib.contextmanager
def npu_dra(node: str, kubeconfig: Path, *, deployed: bool = False) -> Iterator[Running]:
    """npu-dra's plugin; `deployed`: in the chart's default configuration (deployed_flags),
    whose per-pod sockets make each state step also take the lock two instances share."""
    with fake_node(node) as host:
        argv = host.argv(kubeconfig, health_interval_s=NPU_HEALTH_INTERVAL_S)
        if deployed:
            argv = [a for a in argv if not a.startswith(("--hardware=", "--healthcheck-port="))]
            argv += deployed_flags(str(uuid.uuid4()), free_port())
        popen = spawn_plugin([*argv, "--claim-prefetch"], host.log)
        plugin = Running(
            PER_POD if deployed else "npu-dra",
            NPU_DRIVER,
            tuple(f"npu-{n}" for n in range(DEVICES)),
            host.registry,
            popen,
            host.log,
        )
        try:
            yield plugin
        finally:
            plugin.stop()


@contextlib.contextmanager
def go_test_driver(binary: Path, node: str, kubeconfig: Path) -> Iterator[Running]:
    def argv(root: Path) -> list[str]:
        return [
            str(binary),
            f"--kubeconfig={kubeconfig}",
            f"--kube-api-qps={GO_QPS}",
            f"--kube-api-burst={GO_BURST}",
            "kubelet-plugin",
            f"--node-name={node}",
            f"--plugin-registration-path={root / 'registry'}",
            f"--datadir={root / 'plugins'}",
            f"--cdi-dir={root / 'cdi'}",
            f"--num-devices={DEVICES}",
        ]

    # the directories its DaemonSet mounts
    directories = ("registry", f"plugins/{GO_DRIVER}", "cdi")
    with _scratch_process("Go", GO_DRIVER, "npd-go-", directories, argv) as plugin:
        yield plugin


FLOOR_DRIVER = "floor.example.com"


@contextlib.contextmanager
def grpc_floor() -> Iterator[Running]:
    """benchmarks/_grpc_floor.py: grpcio serving canned DRA answers, nothing else."""
    script = Path(__file__).with_name("_grpc_floor.py")

    def argv(root: Path) -> list[str]:
        return [
            sys.executable,
            str(script),
            str(root / "registry"),
            str(root / "plugin"),
            FLOOR_DRIVER,
        ]

    directories = ("registry", "plugin")
    with _scratch_process("floor", FLOOR_DRIVER, "npd-floor-", directories, argv) as plugin:
        yield plugin


@contextlib.contextmanager
def _scratch_process(
    label: str,
    driver: str,
    prefix: str,
    directories: tuple[str, ...],
    argv: Callable[[Path], list[str]],
) -> Iterator[Running]:
    """`argv(root)` run with a fresh scratch root holding `directories` (short: sockets live
    under it; removed afterwards) and its registration directory at root/registry."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    try:
        for directory in directories:
            (root / directory).mkdir(parents=True)
        log = root / "plugin.log"
        plugin = Running(
            label,
            driver,
            tuple(f"device-{n:02d}" for n in range(DEVICES)),
            root / "registry",
            spawn_plugin(argv(root), log),
            log,
        )
        try:
            yield plugin
        finally:
            plugin.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
