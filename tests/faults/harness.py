"""The fault suite's node: `npu-dra kubelet-plugin` as a process on a fake 910B4 host, talking
to the real API server through a `ToxicProxy` with a token bound to its stand-in DaemonSet pod,
and the checks that say whether its state is still whole (a library, also used by
benchmarks/faults.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import yaml
from kubernetes import client

from npu_dra.adapters.boot_id import RECORD_NAME, STALE_TEMP_S
from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.domain.errors import StateError
from tests.e2e.plugin_process import DRIVER, FakeNode, fake_node, plugin_env, stop_group
from tests.e2e.seed_cluster import NAMESPACE, pod_bound_kubeconfig
from tests.faults.toxic import ToxicProxy
from tests.support.controlplane import ControlPlane, log_tail
from tests.support.kubelet import DraClient, Kubelet, WireClaim, wait_for_registration_socket

FETCH_TIMEOUT_S = 3.0  # the plugin's --claim-fetch-timeout in the suite (the default is 20 s)
SERVE_TIMEOUT_S = 30.0  # how long a start may take before a test gives up on it


ONE_INSTANCE, PER_POD = "one-instance", "per-pod"  # socket names: `--seamless-upgrade`
SOCKET_MODES = (ONE_INSTANCE, PER_POD)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@dataclass
class FaultNode:
    plane: ControlPlane
    host: FakeNode
    proxy: ToxicProxy
    kubeconfig: Path
    namespace: str
    plugin: PluginRun | None = None
    fetch_timeout_s: float = FETCH_TIMEOUT_S  # --claim-fetch-timeout, through its env var
    # The socket names: PER_POD, as the chart deploys it on a 1.33+ kubelet (a seamless-upgrade
    # instance, its state steps serialized with any other's through `serialize.lock`), or
    # ONE_INSTANCE. A plugin started again is its pod's container restarted: the same pod UID.
    sockets: str = PER_POD
    pod_uid: str = field(default_factory=lambda: str(uuid.uuid4()))

    def argv(self) -> list[str]:
        """The plugin's command line: the DaemonSet's flags, with this node's socket names."""
        argv = self.host.argv(self.kubeconfig)
        if self.sockets == PER_POD:
            argv += ["--seamless-upgrade=on", f"--pod-uid={self.pod_uid}"]
        return argv

    @property
    def name(self) -> str:
        return self.host.name

    @property
    def data_dir(self) -> Path:
        return self.host.plugins / DRIVER

    @property
    def checkpoint(self) -> Path:
        return self.data_dir / "checkpoint.json"

    def start(self) -> PluginRun:
        """Start the plugin process (one at a time); returns once it is started, not serving."""
        assert self.plugin is None or not self.plugin.running(), "a plugin is still running"
        self.plugin = PluginRun.start(self, {"CLAIM_FETCH_TIMEOUT": str(self.fetch_timeout_s)})
        return self.plugin

    def kubelet(self, timeout_s: float = SERVE_TIMEOUT_S) -> DraClient:
        """The kubelet's client, once the registration socket is there and answers (a socket
        file a killed plugin left behind refuses connections until the new one replaces it)."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.plugin is not None and not self.plugin.running():
                raise RuntimeError(f"the plugin exited:\n{self.plugin.log()}")
            try:
                wait_for_registration_socket(self.host.registry, timeout_s)
                return Kubelet(self.host.registry).register(timeout_s=timeout_s)
            except (grpc.RpcError, FileNotFoundError):  # the old file is being replaced
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def spec_uids(self) -> set[str]:
        prefix, suffix = f"k8s.{DRIVER}-npu_", ".json"
        names = os.listdir(self.host.cdi) if self.host.cdi.exists() else []
        return {n[len(prefix) : -len(suffix)] for n in names if n.startswith(prefix)}

    def temp_files(self) -> list[str]:
        """Temp files a start should have removed. A boot record's temp file younger than
        STALE_TEMP_S is spared by design (another instance may be writing it: adapters/boot_id.py)
        and goes at a later start, so a kill just before the last start may leave one."""
        found = []
        young = time.time() - STALE_TEMP_S
        for directory in (self.host.cdi, self.data_dir):
            if not directory.exists():
                continue
            for name in os.listdir(directory):
                path = directory / name
                spared = name.startswith(f".{RECORD_NAME}.") and _mtime(path) > young
                if name.endswith(".tmp") and not spared:
                    found.append(str(path))
        return sorted(found)

    def slices(self) -> list[dict[str, Any]]:
        resource: Any = client.ResourceV1Api(self.plane.api_client)
        found = resource.list_resource_slice(
            field_selector=f"spec.driver={DRIVER},spec.nodeName={self.name}",
            _preload_content=False,
        )
        items: list[dict[str, Any]] = json.loads(found.data)["items"]
        return items

    def delete_slices(self) -> None:
        resource: Any = client.ResourceV1Api(self.plane.api_client)
        resource.delete_collection_resource_slice(
            field_selector=f"spec.driver={DRIVER},spec.nodeName={self.name}"
        )


@dataclass
class PluginRun:
    node: FaultNode
    popen: subprocess.Popen[bytes]
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def start(cls, node: FaultNode, extra_env: dict[str, str]) -> PluginRun:
        env = {**plugin_env(), **extra_env}
        # No preexec_fn: forking a process with many threads (the proxy's) and running Python in
        # the child can deadlock. setpriv asks for the parent-death signal before it execs.
        setpriv = shutil.which("setpriv")
        dies_with_us = [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []
        argv = [*dies_with_us, *node.argv()]
        with node.host.log.open("ab") as log:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        return cls(node, popen)

    def running(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """kill -9, and reap it."""
        stop_group(self.popen, kill=True)

    def stop(self) -> None:
        stop_group(self.popen)

    def log(self, lines: int = 40) -> str:
        return log_tail(self.node.host.log, lines)


@contextlib.contextmanager
def fault_node(plane: ControlPlane, prefix: str) -> Iterator[FaultNode]:
    """A ready Node, its fake host, a namespace for its claims and a proxy to the API server;
    the plugin (if started) is killed and everything removed at the end."""
    with fake_node(unique(prefix)) as host, node_on(plane, host) as node:
        yield node


@contextlib.contextmanager
def node_on(plane: ControlPlane, host: FakeNode) -> Iterator[FaultNode]:
    """`host` (its files kept as they are) as a ready Node of `plane`, with a namespace and a
    proxy to the API server; the plugin (if started) is killed and the objects removed at the
    end (a host moved to another plane keeps its checkpoint and CDI specs)."""
    core = client.CoreV1Api(plane.api_client)
    with ToxicProxy(int(plane.server.rsplit(":", 1)[1])) as proxy:
        plane.create_ready_node(host.name)
        namespace = plane.create_namespace(unique("faults"))
        node = FaultNode(
            plane, host, proxy, through(pod_bound_kubeconfig(plane, host), proxy), namespace
        )
        try:
            yield node
        finally:
            if node.plugin is not None:
                node.plugin.kill()
            plane.delete_namespace(namespace)
            with contextlib.suppress(client.ApiException):
                core.delete_namespaced_pod(
                    f"ascend-npu-dra-kubeletplugin-{host.name}", NAMESPACE, grace_period_seconds=0
                )
            with contextlib.suppress(client.ApiException):
                core.delete_node(host.name)


def through(kubeconfig: Path, proxy: ToxicProxy) -> Path:
    """The same kubeconfig, with the API server's address replaced by the proxy's."""
    document = yaml.safe_load(kubeconfig.read_text())
    document["clusters"][0]["cluster"]["server"] = proxy.url
    kubeconfig.write_text(yaml.safe_dump(document))
    return kubeconfig


def create_claims(
    node: FaultNode, devices: Iterable[Sequence[str]], *, prefix: str = "claim", workers: int = 8
) -> list[WireClaim]:
    """One ResourceClaim per entry, allocated (as the scheduler would) to those NPUs of the
    node; as the kubelet would send them."""
    resource: Any = client.ResourceV1Api(node.plane.api_client)

    def create(index_devices: tuple[int, Sequence[str]]) -> WireClaim:
        index, names = index_devices
        body = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"{prefix}-{index}", "namespace": node.namespace},
            "spec": {
                "devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": DRIVER}}]}
            },
        }
        created = json.loads(
            resource.create_namespaced_resource_claim(
                node.namespace, body, _preload_content=False
            ).data
        )
        created["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "npu", "driver": DRIVER, "pool": node.name, "device": d}
                        for d in names
                    ]
                }
            }
        }
        resource.replace_namespaced_resource_claim_status(
            created["metadata"]["name"], node.namespace, created, _preload_content=False
        )
        meta = created["metadata"]
        return WireClaim(node.namespace, meta["name"], meta["uid"])

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(create, enumerate(devices)))


@dataclass
class Consistency:
    """What the checker found on a node's disk, against what the kubelet was told."""

    readable: bool
    lost: list[str]  # prepared OK (and not unprepared since), but not in the checkpoint
    double: list[str]  # an exclusive NPU held by two claims at once
    orphans: list[str]  # CDI specs the checkpoint does not back
    temp_files: list[str]
    problem: str = ""

    @property
    def whole(self) -> bool:
        return self.readable and not (self.lost or self.double or self.orphans or self.temp_files)


def check(node: FaultNode, prepared: set[str]) -> Consistency:
    """Read the checkpoint and the CDI dir (the plugin must be serving again, so its start-up
    repair has run); `prepared` holds the UIDs the kubelet was last told were prepared."""
    try:
        checkpoint = FileCheckpointStore(node.checkpoint).load()
    except StateError as error:
        return Consistency(False, [], [], [], node.temp_files(), str(error))
    held: dict[str, list[str]] = {}
    for uid, claim in checkpoint.claims.items():
        for device in claim.devices:
            held.setdefault(device.device, []).append(uid)
    return Consistency(
        readable=True,
        lost=sorted(prepared - set(checkpoint.claims)),
        double=sorted(f"{d}: {uids}" for d, uids in held.items() if len(uids) > 1),
        orphans=sorted(node.spec_uids() - set(checkpoint.claims)),
        temp_files=node.temp_files(),
    )


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0
