"""The real node's cluster as the tests drive it: deploy/manifests' access objects, the plugin
processes with the DaemonSet's flags and the kubelet's real directories, pods created from YAML
and looked at from inside their containers."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.ids import ClaimUID
from tests.e2e.plugin_process import BUS_IDS, SEED_NUMA, spawn_plugin, stop_group
from tests.e2e.seed_cluster import ACCOUNT, NAMESPACE, access_applied
from tests.support.ascend_host import FakeAscendHost, fake_ascend_host
from tests.support.controlplane import ControlPlane, ControlPlaneError, log_tail, wait_for
from tests.support.fake_npu_smi import make_sysfs
from tests.support.node import SEED_IMAGE, RealNode

DRIVER = "npu.huawei.com"
RUNNING_TIMEOUT_S = 120.0
NODE_NAME = "npu-node-1"
REGISTERED = re.compile(rf'"Registered DRA plugin".*driverName="{re.escape(DRIVER)}"')


@dataclass
class Plugin:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def running(self) -> bool:
        return self.popen.poll() is None

    def tail(self, lines: int = 40) -> str:
        return log_tail(self.log, lines)

    def stop(self, *, kill: bool = False) -> None:
        stop_group(self.popen, kill=kill)


@dataclass
class RealCluster:
    plane: ControlPlane
    node: RealNode
    host: FakeAscendHost
    sysfs: Path
    work: Path
    plugin_kubeconfig: Path = Path()
    plugins: dict[str, Plugin] = field(default_factory=dict)

    # plugin processes ----------------------------------------------------------------------

    @property
    def plugins_dir(self) -> Path:
        return self.node.kubelet_root / "plugins"

    @property
    def registry_dir(self) -> Path:
        return self.node.kubelet_root / "plugins_registry"

    @property
    def checkpoint_file(self) -> Path:
        return self.plugins_dir / DRIVER / "checkpoint.json"

    def dra_argv(self) -> list[str]:
        """deploy/manifests' DaemonSet args, run on the host instead of in its pod."""
        return [
            str(Path(sys.executable).with_name("npu-dra")),
            "kubelet-plugin",
            f"--node-name={self.node.name}",
            "--device-profile=npu",
            f"--driver-name={DRIVER}",
            f"--kubelet-registrar-directory-path={self.registry_dir}",
            f"--kubelet-plugins-directory-path={self.plugins_dir}",
            f"--cdi-root={self.node.cdi_root}",
            "--healthcheck-port=-1",
            f"--kubeconfig={self.plugin_kubeconfig}",
            "--hardware=npu-smi",
            f"--npu-smi={self.host.npu_smi}",
            f"--sysfs-root={self.sysfs}",
            f"--dev-root={self.host.dev_dir}",
            "--health-interval=3600",
            "--log-format=json",
        ]

    def start_plugin(self, name: str, argv: list[str]) -> Plugin:
        log = self.work / f"{name}.log"
        plugin = self.plugins[name] = Plugin(name, spawn_plugin(argv, log), log)
        return plugin

    def device_plugin_argv(self, *extra: str) -> list[str]:
        """The classic device plugin's DaemonSet flags with this node's paths."""
        return [
            str(Path(sys.executable).with_name("npu-dra")),
            "device-plugin",
            f"--node-name={self.node.name}",
            f"--device-plugin-path={self.node.kubelet_root / 'device-plugins'}",
            "--hardware=npu-smi",
            f"--npu-smi-path={self.host.npu_smi}",
            f"--dev-root={self.host.dev_dir}",
            f"--sysfs-root={self.sysfs}",
            *extra,
        ]

    def start_dra_plugin(self) -> Plugin:
        return self.start_plugin("dra-plugin", self.dra_argv())

    def stop_plugins(self) -> None:
        for plugin in self.plugins.values():
            plugin.stop()

    def wait_registered(self, plugin: Plugin, timeout: float = 60.0) -> None:
        """The kubelet registered the DRA driver (its CSINode-like record is the log line)."""
        pattern = REGISTERED

        def registered() -> bool:
            if not plugin.running():
                raise AssertionError(f"plugin exited:\n{plugin.tail()}")
            return bool(pattern.search(self.node.kubelet_log(2000)))

        wait_for(
            registered,
            timeout=timeout,
            what=f"kubelet to register {DRIVER}",
            fatal=(AssertionError,),
        )

    def published(self) -> dict[str, dict[str, Any]]:
        found = json.loads(self.plane.kubectl("get", "resourceslices", "-o", "json").stdout)
        return {
            d["name"]: d
            for s in found["items"]
            if (s["spec"]["driver"], s["spec"].get("nodeName")) == (DRIVER, self.node.name)
            for d in s["spec"].get("devices") or []  # 1.35+: counter sets in slices of their own
        }

    # pods ------------------------------------------------------------------------------------

    def apply(self, text: str) -> None:
        self.plane.kubectl("apply", "-f", "-", input=text)

    def read_pod(self, name: str, namespace: str = NAMESPACE) -> dict[str, Any]:
        api = client.CoreV1Api(self.plane.api_client)
        return self.plane.as_json(api.read_namespaced_pod(name, namespace))

    def wait_running(
        self, name: str, namespace: str = NAMESPACE, timeout: float = RUNNING_TIMEOUT_S
    ) -> dict[str, Any]:
        def running() -> dict[str, Any] | None:
            pod = self.read_pod(name, namespace)
            statuses = pod["status"].get("containerStatuses") or []
            if (
                pod["status"].get("phase") == "Running"
                and statuses
                and all(s.get("ready") for s in statuses)
            ):
                return pod
            return None

        try:
            return wait_for(running, timeout=timeout, what=f"pod {namespace}/{name} Running")
        except TimeoutError as error:
            raise AssertionError(f"{error}\n{self.diagnose(name, namespace)}") from None

    def diagnose(self, name: str, namespace: str = NAMESPACE) -> str:
        events = self.plane.kubectl(
            "get",
            "events",
            "-n",
            namespace,
            "--field-selector",
            f"involvedObject.name={name}",
            "-o",
            "custom-columns=REASON:.reason,MESSAGE:.message",
            check=False,
        ).stdout
        pod = self.read_pod(name, namespace)
        plugins = "\n".join(f"--- {n}:\n{p.tail(20)}" for n, p in self.plugins.items())
        return (
            f"pod status: {json.dumps(pod['status'], indent=1)[:3000]}\nevents:\n{events}\n"
            f"--- the pod's log:\n{self.node.pod_log(namespace, name)}\n"
            f"--- kubelet:\n{self.node.kubelet_log(40)}\n"
            f"--- containerd:\n{self.node.containerd_log(20)}\n{plugins}"
        )

    def delete_pod(self, name: str, namespace: str = NAMESPACE, timeout: float = 90.0) -> None:
        """Deletes the pod and waits until the kubelet has finished with it (object gone)."""
        api = client.CoreV1Api(self.plane.api_client)
        with contextlib.suppress(client.ApiException):
            api.delete_namespaced_pod(name, namespace, grace_period_seconds=1)

        def gone() -> bool:
            try:
                api.read_namespaced_pod(name, namespace)
            except client.ApiException as error:
                return error.status == 404
            return False

        wait_for(gone, timeout=timeout, what=f"pod {namespace}/{name} deleted by the kubelet")

    def in_container(self, pod: str, *argv: str, namespace: str = NAMESPACE) -> str:
        return self.node.exec(self.node.container_id(namespace, pod), *argv)

    def claim_uids(self, pod: str, namespace: str = NAMESPACE) -> list[str]:
        found = self.read_pod(pod, namespace)
        api = client.ResourceV1Api(self.plane.api_client)
        names = [
            s.get("resourceClaimName") for s in found["status"].get("resourceClaimStatuses", [])
        ]
        names += [
            r["resourceClaimName"]
            for r in found["spec"].get("resourceClaims", [])
            if r.get("resourceClaimName")
        ]
        return [
            str(api.read_namespaced_resource_claim(n, namespace).metadata.uid) for n in names if n
        ]

    def checkpoint(self) -> Checkpoint:
        """The plugin's record as it reads it back: snapshot plus journal (read only)."""
        return FileCheckpointStore(self.checkpoint_file).load()

    def allocated_devices(self, claim_uid: str) -> list[str]:
        claim = self.checkpoint().claims[ClaimUID(claim_uid)]
        return sorted(str(d.device) for d in claim.devices)

    def checkpointed_uids(self) -> set[str]:
        return {str(uid) for uid in self.checkpoint().claims}

    def cdi_spec_uids(self) -> set[str]:
        return {p.stem.rsplit("_", 1)[-1] for p in self.node.cdi_root.glob("*.json")}


def dra_plugin_identity(cluster: RealCluster) -> Path:
    """The ServiceAccount's token bound to a real pod on the node (a sleeping stand-in for the
    DaemonSet's pod, which the DaemonSet test runs for real): the token carries the node name
    that the ResourceSlice policy checks."""
    name = f"{ACCOUNT}-standin"
    cluster.apply(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": NAMESPACE},
                "spec": {
                    "serviceAccountName": ACCOUNT,
                    "nodeName": cluster.node.name,
                    "automountServiceAccountToken": False,
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {
                            "name": "standin",
                            "image": SEED_IMAGE,
                            "imagePullPolicy": "Never",
                            "command": ["sleep", "36000"],
                        }
                    ],
                },
            }
        )
    )
    pod = cluster.wait_running(name)
    bound = client.V1BoundObjectReference(
        kind="Pod", api_version="v1", name=name, uid=pod["metadata"]["uid"]
    )
    return cluster.plane.service_account_kubeconfig(
        NAMESPACE, ACCOUNT, bound_object=bound, create=False
    )


@contextlib.contextmanager
def running_dra_plugin(cluster: RealCluster) -> Iterator[Plugin]:
    plugin = cluster.start_dra_plugin()
    try:
        yield plugin
    finally:
        plugin.stop()


@contextlib.contextmanager
def real_cluster_session(
    k8s_bin: Path,
    node_bin: Path,
    images: Path,
    work: Path,
    *,
    feature_gates: Mapping[str, bool] | None = None,
) -> Iterator[RealCluster]:
    """Its own control plane (with `feature_gates`, if any), the real node, a fake Ascend host
    and deploy/manifests' access objects; everything undone on exit. The plugin's /dev stand-in
    holds real character devices outside /dev, so `--dev-root` must flow into the CDI spec's
    hostPath for a container to get them."""
    with contextlib.ExitStack() as stack:
        plane = ControlPlane(k8s_bin, work / "control-plane", feature_gates=feature_gates)
        stack.callback(plane.stop)
        plane.start()
        dev_root = Path(tempfile.mkdtemp(prefix="npu-dev-", dir="/run"))
        stack.callback(shutil.rmtree, dev_root, ignore_errors=True)
        host = stack.enter_context(fake_ascend_host(range(8), dev_dir=dev_root))
        node = RealNode(
            plane,
            k8s_bin=k8s_bin,
            node_bin=node_bin,
            name=NODE_NAME,
            work_dir=work / "node",
            images_dir=images,
        )
        node.start()
        stack.callback(node.stop)
        sysfs = make_sysfs(work / "sys", pci_numa=dict(zip(BUS_IDS, SEED_NUMA, strict=True)))
        stack.enter_context(access_applied(plane))
        cluster = RealCluster(plane, node, host, sysfs, work)
        stack.callback(cluster.stop_plugins)
        cluster.plugin_kubeconfig = dra_plugin_identity(cluster)
        yield cluster


# One real node per test folder: opened by the folder's session fixture, closed as soon as the
# folder's last test is done (one node at a time: a node holds the machine's kubelet paths).
_OPEN: dict[Path, pytest.StashKey[contextlib.ExitStack]] = {}


def folder_real_cluster(
    request: pytest.FixtureRequest,
    folder: Path,
    *,
    k8s_bin: Path,
    node_bin: Path,
    images: Path,
    work: Path,
    what: str,
) -> Iterator[RealCluster]:
    """The body of a folder's session fixture: `what` names the node in a start failure."""
    key = _OPEN.setdefault(folder, pytest.StashKey[contextlib.ExitStack]())
    stack = contextlib.ExitStack()
    try:
        cluster = stack.enter_context(real_cluster_session(k8s_bin, node_bin, images, work))
    except ControlPlaneError as error:  # NodeError too
        stack.close()
        pytest.fail(f"{what} did not start: {error}", pytrace=False)
    request.config.stash[key] = stack
    with stack:
        yield cluster


def close_after_folder(folder: Path, item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """For the folder's pytest_runtest_teardown: close its node after its last test."""
    if nextitem is None or folder not in Path(nextitem.path).resolve().parents:
        key = _OPEN.get(folder)
        stack = None if key is None else item.config.stash.get(key, None)
        if stack is not None:
            stack.close()
