"""deploy/manifests on a real control plane, for tests/e2e/test_deploy.py: applying them (and
removing exactly what was applied), acting with the plugin's own token, and running
`npu-dra kubelet-plugin` as the DaemonSet would, with its host paths moved to a scratch dir."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client

from tests.deploy.objects import MANIFESTS, expanded_argv, manifests, of_kind, only, policy_on
from tests.support.controlplane import ControlPlane, free_port, log_tail, wait_for

NAMESPACE = only(manifests(), "Namespace")["metadata"]["name"]
ACCOUNT = only(manifests(), "ServiceAccount")["metadata"]["name"]
USER = f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"
POLICY = policy_on(manifests(), "resourceslices")["metadata"]["name"]
DEVICE_CLASS = next(of_kind(manifests(), "DeviceClass"))["metadata"]["name"]  # whole chips
DRIVER = DEVICE_CLASS  # the DeviceClass selects device.driver == its own name
PROBE_DRIVER = "probe.deploy-e2e.example.com"  # hand-made slices, never the plugin's pool
FAKE_NODE = "chip: 910B4\ncount: 8\nnumaNodes: [6, 6, 4, 4, 0, 0, 2, 2]\n"
PLUGIN_STOP_S = 20.0

Result = subprocess.CompletedProcess[str]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def kubectl_json(plane: ControlPlane, *args: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(plane.kubectl(*args, "-o", "json").stdout)
    return found


def exists(plane: ControlPlane, *what: str) -> bool:
    return plane.kubectl("get", *what, "--ignore-not-found", "-o", "name", check=False).stdout != ""


def namespace_phase(plane: ControlPlane) -> str:
    """Active, Terminating, or "" when NAMESPACE does not exist."""
    args = ("get", "namespace", NAMESPACE, "--ignore-not-found", "-o", "jsonpath={.status.phase}")
    return plane.kubectl(*args).stdout.strip()


@dataclass
class Deployment:
    plane: ControlPlane
    node_a: str
    node_b: str
    pod: dict[str, Any]  # the DaemonSet's pod on node A
    token: Path  # kubeconfig: the ServiceAccount's token bound to that pod
    unbound_token: Path  # kubeconfig: the same ServiceAccount, no bound object

    def as_plugin(self, *args: str, stdin: str | None = None, token: Path | None = None) -> Result:
        """kubectl with the plugin's pod-bound token (or `token`)."""
        return self.plane.kubectl(*args, check=False, input=stdin, kubeconfig=token or self.token)


def daemonset_pod_on(plane: ControlPlane, node: str) -> dict[str, Any] | None:
    selector = only(manifests(), "DaemonSet")["spec"]["selector"]["matchLabels"]
    labels = ",".join(f"{k}={v}" for k, v in selector.items())
    pods = kubectl_json(plane, "get", "pods", "-n", NAMESPACE, "-l", labels)["items"]
    return next((p for p in pods if p["spec"].get("nodeName") == node), None)


@contextlib.contextmanager
def deployed(plane: ControlPlane, scratch: Path) -> Iterator[Deployment]:
    """Nodes A and B, deploy/manifests applied for real, and the ServiceAccount's tokens (one
    bound to the DaemonSet's pod on A); on exit, removes what it made and nothing older."""
    # Another module's teardown may have left the namespace terminating: nothing can be created
    # in it until it is gone.
    wait_for(
        lambda: namespace_phase(plane) != "Terminating",
        timeout=120,
        what=f"namespace {NAMESPACE} to finish terminating",
    )
    had_namespace = exists(plane, "namespace", NAMESPACE)
    had_device_class = exists(plane, "deviceclass", DEVICE_CLASS)
    nodes = unique("deploy-node-a"), unique("deploy-node-b")
    try:
        for node in nodes:  # NPU nodes, labelled as the DaemonSet selects (README quickstart)
            plane.create_ready_node(node, {"accelerator": "huawei-Ascend910"})
        plane.kubectl("apply", "--server-side", "-f", str(MANIFESTS))
        pod = wait_for(
            lambda: daemonset_pod_on(plane, nodes[0]),
            timeout=90,
            what=f"the DaemonSet's pod to be bound to {nodes[0]}",
        )
        # The helper writes one kubeconfig path per ServiceAccount: copy each before the next.
        unbound = scratch / "unbound.kubeconfig"
        shutil.copy(plane.service_account_kubeconfig(NAMESPACE, ACCOUNT, create=False), unbound)
        meta = pod["metadata"]
        bound = client.V1BoundObjectReference(
            kind="Pod", api_version="v1", name=meta["name"], uid=meta["uid"]
        )
        token = scratch / "bound.kubeconfig"
        made = plane.service_account_kubeconfig(
            NAMESPACE, ACCOUNT, bound_object=bound, create=False
        )
        shutil.copy(made, token)
        yield Deployment(plane, *nodes, pod, token, unbound)
    finally:
        _remove(plane, had_namespace, had_device_class, nodes)


def _remove(
    plane: ControlPlane, had_namespace: bool, had_device_class: bool, nodes: tuple[str, ...]
) -> None:
    name = only(manifests(), "DaemonSet")["metadata"]["name"]
    plane.kubectl("delete", "daemonset", name, "-n", NAMESPACE, "--ignore-not-found", check=False)
    if not had_namespace:
        plane.delete_namespace(NAMESPACE)  # force-deletes the pods no kubelet will ever finish
        # Gone before the next module, which may apply deploy/manifests again.
        wait_for(lambda: not namespace_phase(plane), timeout=120, what=f"{NAMESPACE} deleted")
    for obj in manifests():
        kind, meta = obj["kind"], obj["metadata"]
        cluster_scoped = "namespace" not in meta and kind != "Namespace"
        if cluster_scoped and not (kind == "DeviceClass" and had_device_class):
            plane.kubectl("delete", kind, meta["name"], "--ignore-not-found", check=False)
    selector = f"--field-selector=spec.driver={PROBE_DRIVER}"
    plane.kubectl("delete", "resourceslices", selector, check=False)
    for node in nodes:  # its ResourceSlices go with it (ownerReferences)
        plane.kubectl("delete", "node", node, "--ignore-not-found", check=False)


def probe_slice(
    name: str, node: str | None, devices: int = 1, *, driver: str = PROBE_DRIVER
) -> dict[str, Any]:
    """A ResourceSlice of `driver` on `node`, in the pool named after the node as the plugin
    names its own (None: a cluster-wide pool, named `name`)."""
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": node or name, "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": f"probe-{n}"} for n in range(devices)],
    }
    if node is None:
        spec["allNodes"] = True
    else:
        spec["nodeName"] = node
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def denied_by_policy(result: Result, *, says: str) -> bool:
    return result.returncode != 0 and POLICY in result.stderr and says in result.stderr


def forbidden(result: Result, *, verb: str, resource: str) -> bool:
    """Refused by RBAC (not by admission) for exactly this verb and resource."""
    return (
        result.returncode != 0
        and "(Forbidden)" in result.stderr
        and f'"{USER}" cannot {verb} resource "{resource}"' in result.stderr
    )


# --- the plugin process ----------------------------------------------------------------------


@dataclass
class RunningPlugin:
    process: subprocess.Popen[bytes]
    log: Path
    registry: Path
    cdi: Path
    healthcheck_port: int

    def tail(self) -> str:
        return log_tail(self.log)


def plugin_argv(deployment: Deployment, workdir: Path, port: int) -> list[str]:
    """The DaemonSet's command and args for node A, with the host paths moved into `workdir`,
    fake hardware instead of npu-smi, and the pod-bound token instead of the in-cluster one."""
    hardware = workdir / "node.yaml"
    hardware.write_text(FAKE_NODE)
    moved = {
        "--kubelet-registrar-directory-path": str(workdir / "registry"),
        "--kubelet-plugins-directory-path": str(workdir / "plugins"),
        "--cdi-root": str(workdir / "cdi"),
        "--healthcheck-port": str(port),
        "--hardware": f"fake:{hardware}",
    }
    command, *args = expanded_argv(only(manifests(), "DaemonSet"), {"NODE_NAME": deployment.node_a})
    assert command == "npu-dra"
    argv = [Path(sys.executable).with_name("npu-dra").as_posix()]  # the image's console script
    for arg in args:
        flag = arg.split("=", 1)[0]
        argv.append(f"{flag}={moved.pop(flag)}" if flag in moved else arg)
    assert not moved, f"the DaemonSet no longer sets {sorted(moved)}"
    return [*argv, f"--kubeconfig={deployment.token}"]


def _die_with_parent() -> Callable[[], None]:
    """A preexec_fn: the kernel SIGKILLs the plugin should the test process die unexpectedly."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here, not in the forked child

    def preexec() -> None:
        prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG

    return preexec


@contextlib.contextmanager
def running_plugin(deployment: Deployment) -> Iterator[RunningPlugin]:
    """`npu-dra kubelet-plugin` for node A until exit: SIGTERM, SIGKILL after PLUGIN_STOP_S."""
    workdir = Path(tempfile.mkdtemp(prefix="npu-dra-deploy-", dir="/tmp"))  # short socket paths
    port = free_port()
    log = workdir / "plugin.log"
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG" and "proxy" not in k.lower()}
    with log.open("wb") as handle:
        process = subprocess.Popen(
            plugin_argv(deployment, workdir, port),
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent(),  # noqa: PLW1509 (only prctl)
        )
    try:
        yield RunningPlugin(process, log, workdir / "registry", workdir / "cdi", port)
    finally:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=PLUGIN_STOP_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        shutil.rmtree(workdir, ignore_errors=True)


def node_slices(plane: ControlPlane, node: str) -> list[dict[str, Any]]:
    selector = f"--field-selector=spec.driver={DRIVER},spec.nodeName={node}"
    items: list[dict[str, Any]] = kubectl_json(plane, "get", "resourceslices", selector)["items"]
    return items


def published(deployment: Deployment, plugin: RunningPlugin) -> list[dict[str, Any]]:
    """Node A's slices once they hold the fake node's 8 NPUs, else [] (fails if it exited)."""
    assert plugin.process.poll() is None, f"the plugin exited:\n{plugin.tail()}"
    slices = node_slices(deployment.plane, deployment.node_a)
    return slices if sum(len(s["spec"].get("devices", [])) for s in slices) == 8 else []
