"""The seed's flow end to end on a real Kubernetes v1.34.3 control plane.

Two fake 910B4 nodes each run `npu-dra kubelet-plugin` as a process (fake npu-smi replaying the
recorded outputs, a fake /sys putting npu-0 and npu-1 of node A on NUMA node 6 and none of node B
there), with the ServiceAccount, RBAC and ResourceSlice policy of deploy/manifests and a token
bound to a stand-in for the DaemonSet's pod on that node. Then, as the seed describes: the slices
carry the seed's attributes; the seed's DeviceClass, ResourceClaimTemplate + Pod and
`numaNode == 6` ResourceClaim + Pod are applied verbatim; the real scheduler allocates and binds;
the test, acting as the kubelet, finds each plugin through its registration socket and prepares
and unprepares the pods' claims, checking the CDI specs on disk. A claim nothing can satisfy
stays pending with the scheduler's reason, and slices the kubelet deletes come back at once.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.e2e.plugin_process import (
    DRIVER,
    SEED_NUMA,
    FakeNode,
    PluginProcess,
    fake_node,
    plugin_process,
)
from tests.support.controlplane import ControlPlane, wait_for
from tests.support.kubelet import DraClient, Kubelet, WireClaim

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "deploy" / "manifests"
NAMESPACE = "ascend-dra"
ACCOUNT = "ascend-npu-dra-kubeletplugin"
ACCESS_KINDS = {
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}
NODE_B_NUMA = (0, 0, 0, 0, 2, 2, 2, 2)  # no NUMA node 6: the seed's NUMA claim fits node A only
SCHEDULE_S = 60.0
REPUBLISH_S = 10.0

# --- the seed's YAML, verbatim ------------------------------------------------------------------
LD_LIBRARY_PATH = ":".join(
    [
        "/usr/local/Ascend/driver/lib64",
        "/usr/local/Ascend/driver/lib64/common",
        "/usr/local/Ascend/driver/lib64/driver",
        "/usr/local/Ascend/ascend-toolkit/latest/lib64",
        "/usr/local/Ascend/ascend-toolkit/latest/runtime/lib64",
    ]
)
SEED_DEVICE_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: npu.huawei.com
spec:
  selectors:
  - cel:
      expression: |-
        device.driver == "npu.huawei.com"
"""
SEED_POD_SPEC = f"""\
  containers:
  - name: app
    image: docker.io/library/ubuntu:22.04
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
    resources:
      claims:
      - name: npu
    env:
    - name: LD_LIBRARY_PATH
      value: {LD_LIBRARY_PATH}
    volumeMounts:
    - name: ascend-driver
      mountPath: /usr/local/Ascend
      readOnly: true
    - name: npu-smi-command
      mountPath: /usr/local/bin/npu-smi
      readOnly: true
  volumes:
  - name: ascend-driver
    hostPath:
      path: /usr/local/Ascend
      type: Directory
  - name: npu-smi-command
    hostPath:
      path: /usr/local/bin/npu-smi
      type: File
"""
SEED_TEMPLATE_AND_POD = f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: npu-claim-template
  namespace: ascend-dra
spec:
  spec:
    devices:
      requests:
      - name: npu
        exactly:
          deviceClassName: npu.huawei.com
---
apiVersion: v1
kind: Pod
metadata:
  name: npu-pod
  namespace: ascend-dra
spec:
  resourceClaims:
  - name: npu
    resourceClaimTemplateName: npu-claim-template
{SEED_POD_SPEC}"""


def numa_claim_and_pod(numa: int, claim: str, pod: str) -> str:
    """The seed's ResourceClaim + Pod (`npu-numa-claim`, `npu-numa-pod`, NUMA node 6)."""
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: {claim}
  namespace: ascend-dra
spec:
  devices:
    requests:
    - name: npu
      exactly:
        deviceClassName: npu.huawei.com
        allocationMode: All
        selectors:
        - cel:
            expression: |-
              device.attributes["npu.huawei.com"].numaNode == {numa}
---
apiVersion: v1
kind: Pod
metadata:
  name: {pod}
  namespace: ascend-dra
spec:
  resourceClaims:
  - name: npu
    resourceClaimName: {claim}
{SEED_POD_SPEC}"""


# --- the cluster: deploy/manifests' access objects, two nodes, two plugin processes -------------


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
    """deploy/manifests' Namespace, ServiceAccount, RBAC and ResourceSlice policy (the DeviceClass
    is the seed's own, and the DaemonSet is what the plugin processes stand in for)."""
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
    """Applies the access objects and the seed's DeviceClass; removes those it created."""
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
    had_class = exists(plane, "deviceclass", DRIVER)
    try:
        plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))
        plane.kubectl("apply", "-f", "-", input=SEED_DEVICE_CLASS)
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
        if not had_class:
            plane.kubectl("delete", "deviceclass", DRIVER, "--ignore-not-found", check=False)


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
                containers=[client.V1Container(name="kubeletplugin", image="npu-dra:0.1.0")],
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


@pytest.fixture(scope="module")
def seed(control_plane: ControlPlane) -> Iterator[Seed]:
    suffix = uuid.uuid4().hex[:6]
    with contextlib.ExitStack() as stack:
        stack.enter_context(access_applied(control_plane))
        node_a = stack.enter_context(fake_node(f"seed-a-{suffix}", SEED_NUMA))
        node_b = stack.enter_context(fake_node(f"seed-b-{suffix}", NODE_B_NUMA))
        plugins: dict[str, PluginProcess] = {}
        for node in (node_a, node_b):
            control_plane.create_ready_node(node.name)
            stack.callback(control_plane.kubectl, "delete", "node", node.name, check=False)
            token = pod_bound_kubeconfig(control_plane, node)
            plugins[node.name] = stack.enter_context(plugin_process(node, token))
        found = Seed(control_plane, node_a, node_b, plugins)
        for node in (node_a, node_b):
            wait_published(found, node.name, SCHEDULE_S)
        yield found


@pytest.fixture(scope="module")
def kubelets(seed: Seed) -> Iterator[dict[str, DraClient]]:
    """Per node, the kubelet's connection to the plugin it found through the registration socket."""
    clients = {n.name: Kubelet(n.registry).register() for n in (seed.node_a, seed.node_b)}
    yield clients
    for dra in clients.values():
        dra.close()


# --- helpers acting as the scheduler's observer and as the kubelet ------------------------------


def read_pod(plane: ControlPlane, name: str) -> dict[str, Any]:
    return plane.as_json(client.CoreV1Api(plane.api_client).read_namespaced_pod(name, NAMESPACE))


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


# --- the tests -----------------------------------------------------------------------------------


def test_each_node_publishes_its_eight_npus_with_the_seeds_attributes(seed: Seed) -> None:
    for node in (seed.node_a, seed.node_b):
        [found] = node_slices(seed.plane, node.name)
        node_uid = read_node_uid(seed.plane, node.name)
        assert found["metadata"]["generateName"] == f"{node.name}-{DRIVER}-"
        assert found["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "name": node.name,
                "uid": node_uid,
                "controller": True,
            }
        ]
        assert found["spec"]["pool"]["name"] == node.name
        assert found["spec"]["pool"]["resourceSliceCount"] == 1
        devices = {d["name"]: d for d in found["spec"]["devices"]}
        assert sorted(devices) == [f"npu-{n}" for n in range(8)]
        for n, numa in enumerate(node.numa):
            device = devices[f"npu-{n}"]
            attributes = device["attributes"]
            assert attributes["chipName"] == {"string": "910B4"}
            assert attributes["numaNode"] == {"int": numa}
            assert attributes["physicalId"] == {"int": n}
            assert attributes["topologyGroup"] == {"string": "ring-0"}
            assert device["capacity"]["memCapacity"] == {"value": "32Gi"}


def read_node_uid(plane: ControlPlane, node: str) -> str:
    return str(client.CoreV1Api(plane.api_client).read_node(node).metadata.uid)


def test_the_seeds_numa_claim_gets_node_as_numa_6_npus_prepared_and_unprepared(
    seed: Seed, kubelets: dict[str, DraClient]
) -> None:
    seed.plane.kubectl(
        "apply", "-f", "-", input=numa_claim_and_pod(6, "npu-numa-claim", "npu-numa-pod")
    )
    try:
        node = bound_node(seed, "npu-numa-pod")
        claim = read_claim(seed.plane, "npu-numa-claim")
        results = claim["status"]["allocation"]["devices"]["results"]
        assert node == seed.node_a.name
        assert sorted((r["pool"], r["device"]) for r in results) == [
            (node, "npu-0"),
            (node, "npu-1"),
        ]

        assert prepare(kubelets, node, claim) == ["npu-0", "npu-1"]

        uid = claim["metadata"]["uid"]
        assert {p for p in cdi_device_nodes(seed.node_a, uid) if "davinci" in p} >= davinci([0, 1])
        assert not cdi_device_nodes(seed.node_a, uid) & davinci([2, 3, 4, 5, 6, 7])
        delete_pod(seed, "npu-numa-pod")
        unprepare(kubelets, node, claim)
        assert cdi_spec_files(seed.node_a, uid) == []
    finally:
        delete_pod(seed, "npu-numa-pod")
        seed.plane.kubectl(
            "delete",
            "resourceclaim",
            "npu-numa-claim",
            "-n",
            NAMESPACE,
            "--ignore-not-found",
            check=False,
        )


def test_the_seeds_template_pod_gets_one_npu_prepared_on_its_node_and_unprepared(
    seed: Seed, kubelets: dict[str, DraClient]
) -> None:
    seed.plane.kubectl("apply", "-f", "-", input=SEED_TEMPLATE_AND_POD)
    try:
        node_name = bound_node(seed, "npu-pod")
        [claim_name] = pod_claim_names(seed, "npu-pod")
        claim = read_claim(seed.plane, claim_name)
        [result] = claim["status"]["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"]) == (DRIVER, node_name)
        node = seed.node_a if node_name == seed.node_a.name else seed.node_b
        physical_id = published_devices(seed, node_name)[result["device"]]["attributes"][
            "physicalId"
        ]["int"]

        assert prepare(kubelets, node_name, claim) == [result["device"]]

        uid = claim["metadata"]["uid"]
        chips = {p for p in cdi_device_nodes(node, uid) if p.removeprefix("/dev/davinci").isdigit()}
        assert chips == davinci([physical_id])
        delete_pod(seed, "npu-pod")
        unprepare(kubelets, node_name, claim)
        assert cdi_spec_files(node, uid) == []
    finally:
        delete_pod(seed, "npu-pod")
        seed.plane.kubectl(
            "delete",
            "resourceclaimtemplate",
            "npu-claim-template",
            "-n",
            NAMESPACE,
            "--ignore-not-found",
            check=False,
        )


def test_a_claim_nothing_satisfies_stays_pending_with_the_schedulers_reason(seed: Seed) -> None:
    seed.plane.kubectl(
        "apply", "-f", "-", input=numa_claim_and_pod(99, "npu-numa99-claim", "npu-numa99-pod")
    )
    try:

        def unschedulable() -> dict[str, Any] | None:
            conditions = read_pod(seed.plane, "npu-numa99-pod")["status"].get("conditions") or []
            return next(
                (c for c in conditions if c["type"] == "PodScheduled" and c["status"] == "False"),
                None,
            )

        condition = wait_for(unschedulable, timeout=SCHEDULE_S, what="PodScheduled=False")
        assert condition["reason"] == "Unschedulable"
        assert "cannot allocate all claims" in condition["message"], condition["message"]
        assert read_pod(seed.plane, "npu-numa99-pod")["spec"].get("nodeName") is None
        assert read_claim(seed.plane, "npu-numa99-claim")["status"].get("allocation") is None
    finally:
        delete_pod(seed, "npu-numa99-pod")
        seed.plane.kubectl(
            "delete",
            "resourceclaim",
            "npu-numa99-claim",
            "-n",
            NAMESPACE,
            "--ignore-not-found",
            check=False,
        )


def test_slices_the_kubelet_deletes_are_republished_within_seconds(seed: Seed) -> None:
    """The kubelet deletes a node's slices when it restarts; hardware is re-probed only hourly
    here, so only the plugin's watch can bring them back this fast."""
    node = seed.node_b.name
    before = {s["metadata"]["name"] for s in node_slices(seed.plane, node)}
    client.ResourceV1Api(seed.plane.api_client).delete_collection_resource_slice(
        field_selector=f"spec.nodeName={node},spec.driver={DRIVER}"
    )
    started = time.monotonic()

    wait_published(seed, node, REPUBLISH_S)

    elapsed = time.monotonic() - started
    after = node_slices(seed.plane, node)
    assert {s["metadata"]["name"] for s in after}.isdisjoint(before), "never deleted"
    assert elapsed < REPUBLISH_S
