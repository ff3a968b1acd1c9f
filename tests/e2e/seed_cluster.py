"""The seed's cluster for tests/e2e/test_seed_flow.py: deploy/manifests' access objects applied
(and removed again, leaving whatever was there before), pod-bound tokens for the plugin
processes, and the observer's and the kubelet's side of the flow."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from tests.e2e.plugin_process import DRIVER, FakeNode, PluginProcess
from tests.support.controlplane import ControlPlane, wait_for
from tests.support.kubelet import DraClient, WireClaim
from tests.support.version import IMAGE

MANIFESTS = Path(__file__).resolve().parents[2] / "deploy" / "manifests"
NAMESPACE = "ascend-dra"
ACCOUNT = "ascend-npu-dra-kubeletplugin"
ACCESS_KINDS = {
    "DeviceClass",
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}
SCHEDULE_S = 60.0
# The one rule the chart adds with claimPrefetch (templates/rbac.yaml): the pods of the node.
PREFETCH_RULE = {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]}


@dataclass
class Seed:
    plane: ControlPlane
    node_a: FakeNode
    node_b: FakeNode
    plugins: dict[str, PluginProcess]

    def plugin(self, node: str) -> PluginProcess:
        return self.plugins[node]

    def logs(self) -> str:
        return "\n".join(f"--- {n} plugin log:\n{p.tail()}" for n, p in self.plugins.items())


def access_objects() -> list[dict[str, Any]]:
    """deploy/manifests' Namespace, ServiceAccount, RBAC, policies and DeviceClasses (one per
    kind: the seed's name selects whole chips); the DaemonSet is what the plugin processes stand
    in for."""
    documents = [
        doc
        for path in sorted(MANIFESTS.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]
    return [doc for doc in documents if doc["kind"] in ACCESS_KINDS]


def exists(plane: ControlPlane, kind: str, name: str, namespace: str | None = None) -> bool:
    scope = ["-n", namespace] if namespace else []
    found = plane.kubectl("get", kind, name, *scope, "--ignore-not-found", "-o", "name")
    return bool(found.stdout.strip())


def namespace_gone_or_active(plane: ControlPlane) -> bool:
    found = plane.kubectl("get", "namespace", NAMESPACE, "--ignore-not-found", "-o", "json")
    return not found.stdout.strip() or json.loads(found.stdout)["status"]["phase"] == "Active"


@contextlib.contextmanager
def access_applied(plane: ControlPlane) -> Iterator[None]:
    """Applies the access objects; removes those it created."""
    wait_for(
        lambda: namespace_gone_or_active(plane),
        timeout=SCHEDULE_S,
        what=f"namespace {NAMESPACE} to finish terminating",
    )
    objects = access_objects()
    created = [
        obj
        for obj in objects
        if not exists(plane, obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace"))
    ]
    try:
        plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))
        yield
    finally:
        for obj in reversed(created):
            meta = obj["metadata"]
            if obj["kind"] == "Namespace":
                plane.delete_namespace(meta["name"])
            elif "namespace" not in meta:
                plane.kubectl(
                    "delete", obj["kind"], meta["name"], "--ignore-not-found", check=False
                )


def pod_bound_kubeconfig(plane: ControlPlane, node: FakeNode) -> Path:
    """A stand-in for the DaemonSet's pod on `node` and the ServiceAccount's token bound to it:
    the token carries the node's name, which the ResourceSlice policy checks."""
    core = client.CoreV1Api(plane.api_client)
    pod = core.create_namespaced_pod(
        NAMESPACE,
        client.V1Pod(
            metadata=client.V1ObjectMeta(name=f"{ACCOUNT}-{node.name}"),
            spec=client.V1PodSpec(
                service_account_name=ACCOUNT,
                node_name=node.name,
                containers=[client.V1Container(name="kubeletplugin", image=IMAGE)],
            ),
        ),
    )
    bound = client.V1BoundObjectReference(
        kind="Pod", api_version="v1", name=pod.metadata.name, uid=pod.metadata.uid
    )
    made = plane.service_account_kubeconfig(NAMESPACE, ACCOUNT, bound_object=bound, create=False)
    return Path(shutil.copy(made, node.root / "token.kubeconfig"))  # one path per account


def node_slices(plane: ControlPlane, node: str) -> list[dict[str, Any]]:
    found = plane.kubectl("get", "resourceslices", "-o", "json").stdout
    return [
        s
        for s in json.loads(found)["items"]
        if (s["spec"]["driver"], s["spec"].get("nodeName")) == (DRIVER, node)
    ]


def node_devices(plane: ControlPlane, node: str) -> dict[str, dict[str, Any]]:
    """The devices of the node's slices, by name."""
    return {d["name"]: d for s in node_slices(plane, node) for d in s["spec"].get("devices", [])}


def published_devices(seed: Seed, node: str) -> dict[str, dict[str, Any]]:
    """The node's published devices by name (fails at once if its plugin died)."""
    plugin = seed.plugin(node)
    if not plugin.running():
        raise AssertionError(f"the plugin of {node} exited:\n{plugin.tail()}")
    return {d["name"]: d for s in node_slices(seed.plane, node) for d in s["spec"]["devices"]}


def wait_published(seed: Seed, node: str, timeout: float) -> None:
    try:
        wait_for(
            lambda: len(published_devices(seed, node)) == 8,
            timeout=timeout,
            what=f"8 NPUs of {node} in ResourceSlices",
            fatal=(AssertionError,),
        )
    except TimeoutError as error:
        raise AssertionError(f"{error}\n{seed.logs()}") from None


# --- helpers acting as the scheduler's observer and as the kubelet ------------------------------


def read_pod(plane: ControlPlane, name: str) -> dict[str, Any]:
    return plane.as_json(client.CoreV1Api(plane.api_client).read_namespaced_pod(name, NAMESPACE))


def read_node_uid(plane: ControlPlane, node: str) -> str:
    return str(client.CoreV1Api(plane.api_client).read_node(node).metadata.uid)


def read_claim(plane: ControlPlane, name: str) -> dict[str, Any]:
    api = client.ResourceV1Api(plane.api_client)
    return plane.as_json(api.read_namespaced_resource_claim(name, NAMESPACE))


def bound_node(seed: Seed, pod: str) -> str:
    try:
        return wait_for(
            lambda: read_pod(seed.plane, pod)["spec"].get("nodeName"),
            timeout=SCHEDULE_S,
            what=f"the scheduler to bind pod {pod}",
        )
    except TimeoutError as error:
        raise AssertionError(f"{error}: {read_pod(seed.plane, pod).get('status')}") from None


def pod_claim_names(seed: Seed, pod: str) -> list[str]:
    """The pod's claims: generated ones from its status, named ones from its spec."""
    found = read_pod(seed.plane, pod)
    generated = {
        s["name"]: s.get("resourceClaimName")
        for s in found["status"].get("resourceClaimStatuses", [])
    }
    return [
        ref.get("resourceClaimName") or generated[ref["name"]]
        for ref in found["spec"]["resourceClaims"]
    ]


def wire(claim: dict[str, Any]) -> WireClaim:
    meta = claim["metadata"]
    return WireClaim(meta["namespace"], meta["name"], meta["uid"])


def cdi_spec_files(node: FakeNode, uid: str) -> list[Path]:
    return sorted(node.cdi.glob(f"*_{uid}.json"))


def cdi_device_nodes(node: FakeNode, uid: str) -> set[str]:
    [spec_file] = cdi_spec_files(node, uid)
    spec = json.loads(spec_file.read_text())
    edits = [spec.get("containerEdits") or {}, *(d["containerEdits"] for d in spec["devices"])]
    return {n["path"] for e in edits for n in e.get("deviceNodes") or []}


def prepare(kubelets: dict[str, DraClient], node: str, claim: dict[str, Any]) -> list[str]:
    """NodePrepareResources for one claim; the prepared device names."""
    response = kubelets[node].prepare([wire(claim)])
    result = response.claims[claim["metadata"]["uid"]]
    assert result.error == "", result.error
    return sorted(d.device_name for d in result.devices)


def unprepare(kubelets: dict[str, DraClient], node: str, claim: dict[str, Any]) -> None:
    response = kubelets[node].unprepare([wire(claim)])
    assert response.claims[claim["metadata"]["uid"]].error == ""


def delete_pod(seed: Seed, name: str) -> None:
    """Gone at once (no kubelet would ever finish a graceful deletion)."""
    with contextlib.suppress(client.ApiException):
        client.CoreV1Api(seed.plane.api_client).delete_namespaced_pod(
            name, NAMESPACE, grace_period_seconds=0
        )


def davinci(physical_ids: list[int]) -> set[str]:
    return {f"/dev/davinci{n}" for n in physical_ids}


PREFETCH_ROLE = "npu-dra-claim-prefetch"


def prefetch_access(account_namespace: str = NAMESPACE) -> str:
    """The chart's prefetch rule, bound to the plugin's ServiceAccount."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": PREFETCH_ROLE},
        "rules": [PREFETCH_RULE],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": PREFETCH_ROLE},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": PREFETCH_ROLE,
        },
        "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": account_namespace}],
    }
    return yaml.safe_dump_all([role, binding])


@contextlib.contextmanager
def prefetch_granted(plane: ControlPlane) -> Iterator[None]:
    """The plugin's ServiceAccount given what the chart's claimPrefetch adds, then taken back."""
    plane.kubectl("apply", "-f", "-", input=prefetch_access())
    try:
        yield
    finally:
        plane.kubectl("delete", "clusterrolebinding,clusterrole", PREFETCH_ROLE,
                      "--ignore-not-found", check=False)  # fmt: skip
