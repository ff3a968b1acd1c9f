"""`npu-dra kubelet-plugin` as a process on a fake 910B4 node, the way the DaemonSet runs it.

A fake node is a scratch directory standing in for the host: the fake npu-smi replaying the
recorded 8x 910B4 outputs, a /dev with davinci0-7, a /sys whose PCI devices carry `numa_node`
files (the NUMA layout is the test's choice), and the kubelet's registry, plugins and CDI
directories. The process runs in its own session, dies with its parent, and is stopped (SIGTERM,
then SIGKILL) when the context ends, even when the test failed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.controlplane import die_with_parent, log_tail
from tests.support.fake_npu_smi import FakeNpuSmi, make_dev_root, make_sysfs

DRIVER = "npu.huawei.com"
# PCI bus ids of npu-0..7 in the recorded `npu-smi info` (tests/fixtures/npu-smi/*910B4_8npu*).
BUS_IDS = (
    "0000:c1:00.0",
    "0000:c2:00.0",
    "0000:81:00.0",
    "0000:82:00.0",
    "0000:01:00.0",
    "0000:02:00.0",
    "0000:41:00.0",
    "0000:42:00.0",
)
SEED_NUMA = (6, 6, 4, 4, 0, 0, 2, 2)  # the seed's node: npu-0 on NUMA node 6
STOP_GRACE_S = 20.0


@dataclass(frozen=True)
class FakeNode:
    name: str
    root: Path
    npu_smi: Path
    numa: tuple[int, ...]

    @property
    def registry(self) -> Path:
        return self.root / "registry"

    @property
    def plugins(self) -> Path:
        return self.root / "plugins"

    @property
    def cdi(self) -> Path:
        return self.root / "cdi"

    @property
    def log(self) -> Path:
        return self.root / "plugin.log"

    def argv(self, kubeconfig: Path, *, health_interval_s: float = 3600.0) -> list[str]:
        """The DaemonSet's flags with this node's paths; the hardware is re-probed only every
        `health_interval_s`, so anything faster is the watch's doing."""
        return [
            str(Path(sys.executable).with_name("npu-dra")),
            "kubelet-plugin",
            f"--node-name={self.name}",
            "--device-profile=npu",
            f"--driver-name={DRIVER}",
            f"--kubelet-registrar-directory-path={self.registry}",
            f"--kubelet-plugins-directory-path={self.plugins}",
            f"--cdi-root={self.cdi}",
            "--healthcheck-port=-1",
            "--cluster=kubernetes",
            f"--kubeconfig={kubeconfig}",
            "--hardware=npu-smi",
            f"--npu-smi={self.npu_smi}",
            f"--sysfs-root={self.root / 'sys'}",
            f"--dev-root={self.root / 'dev'}",
            f"--health-interval={health_interval_s}",
            "--log-format=json",
            # One API per node is checked per host: this fake node's, not the test machine's
            # (the real-node tests' plugins and DaemonSets share /var/lib/npu-dra, one host).
            f"--api-lock-dir={self.root / 'api-lock'}",
        ]


@contextlib.contextmanager
def fake_node(name: str, numa: Sequence[int] = SEED_NUMA) -> Iterator[FakeNode]:
    """A scratch host for node `name` (short paths: unix sockets live under it)."""
    root = Path(tempfile.mkdtemp(prefix="npd-", dir="/tmp"))
    try:
        smi = FakeNpuSmi.from_scenario("910B4_8npu", root / "smi")
        make_dev_root(root / "dev", range(len(BUS_IDS)))
        make_sysfs(root / "sys", pci_numa=dict(zip(BUS_IDS, numa, strict=True)))
        yield FakeNode(name, root, smi.path, tuple(numa))
    finally:
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class PluginProcess:
    node: FakeNode
    popen: subprocess.Popen[bytes]

    def running(self) -> bool:
        return self.popen.poll() is None

    def tail(self, lines: int = 40) -> str:
        return log_tail(self.node.log, lines)

    def stop(self) -> None:
        stop_group(self.popen)


def plugin_env() -> dict[str, str]:
    """No proxy: the control plane is on loopback; no KUBECONFIG: only --kubeconfig counts."""
    return {k: v for k, v in os.environ.items() if k != "KUBECONFIG" and "proxy" not in k.lower()}


def spawn_plugin(argv: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    """A plugin process in its own session, output appended to `log`, dying with this process."""
    with log.open("ab") as out:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=plugin_env(),
            start_new_session=True,
            preexec_fn=die_with_parent(os.getpid()),  # noqa: PLW1509 (only prctl)
        )


def stop_group(
    popen: subprocess.Popen[bytes], *, kill: bool = False, grace: float = STOP_GRACE_S
) -> None:
    """SIGTERM (SIGKILL with `kill`, or after `grace` seconds) to the process group, while its
    leader is unreaped (so the group id cannot have been reused), then reap the leader."""
    if popen.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(popen.pid, signal.SIGKILL if kill else signal.SIGTERM)
    try:
        popen.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(popen.pid, signal.SIGKILL)
        popen.wait(timeout=30)


def start_plugin(node: FakeNode, kubeconfig: Path, **argv_options: float) -> PluginProcess:
    return PluginProcess(node, spawn_plugin(node.argv(kubeconfig, **argv_options), node.log))


@contextlib.contextmanager
def plugin_process(
    node: FakeNode, kubeconfig: Path, **argv_options: float
) -> Iterator[PluginProcess]:
    plugin = start_plugin(node, kubeconfig, **argv_options)
    try:
        yield plugin
    finally:
        plugin.stop()
