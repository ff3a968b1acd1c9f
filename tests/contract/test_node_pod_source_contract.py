"""One contract for the NodePodSource port, over the in-memory pods and a real API server
(v1.34.3): the pods bound to a node are listed when the watch starts and each change is reported
after (a terminal or deleted pod comes done, a pod on another node never comes), and a claim is
read with the pod that controls it and the pods it is reserved for. The claim prefetch
(app/services/claim_prefetch.py) trusts it to know which pods run here."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any, Protocol

import pytest
from kubernetes import client

from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.cluster.memory_node_pods import MemoryNodePods
from npu_dra.domain.claims import NodePod
from npu_dra.domain.ids import ClaimName, Namespace, NodeName
from npu_dra.domain.ports import NodePodSource, Stoppable
from tests.support.controlplane import wait_for
from tests.support.k8s_fixtures import plane_for
from tests.support.kubelet import allocated_claim

NAMESPACE = "default"
WAIT_S = 10.0


class Admin(Protocol):
    source: NodePodSource

    def create_pod(self, name: str, node: str, claim: str) -> str: ...  # its UID
    def finish(self, name: str) -> None: ...  # phase Succeeded
    def delete(self, name: str) -> None: ...
    def create_claim(self, name: str, pod: str, pod_uid: str) -> None: ...


def pod_body(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "registry.invalid/none:0"}],
            "resourceClaims": [{"name": "npu", "resourceClaimTemplateName": "contract-none"}],
        },
    }


def claim_statuses(claim: str) -> dict[str, Any]:
    return {"resourceClaimStatuses": [{"name": "npu", "resourceClaimName": claim}]}


def claim_body(name: str, pod: str, pod_uid: str) -> dict[str, Any]:
    body = allocated_claim(name, ["npu-0"], namespace=NAMESPACE)
    owner = {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": pod_uid, "controller": True}
    body["metadata"]["ownerReferences"] = [owner]
    body["status"]["reservedFor"] = [{"resource": "pods", "name": pod, "uid": pod_uid}]
    return body


class MemoryAdmin:
    def __init__(self) -> None:
        self.cluster = MemoryCluster()
        self.source = self.pods = MemoryNodePods(self.cluster)
        self.bodies: dict[str, dict[str, Any]] = {}

    def create_pod(self, name: str, node: str, claim: str) -> str:
        body = pod_body(name, node)
        body["metadata"]["uid"] = f"uid-{name}"
        body["status"] = {"phase": "Pending", **claim_statuses(claim)}
        self.bodies[name] = body
        self.pods.apply(body)
        return str(body["metadata"]["uid"])

    def finish(self, name: str) -> None:
        self.bodies[name]["status"]["phase"] = "Succeeded"
        self.pods.apply(self.bodies[name])

    def delete(self, name: str) -> None:
        self.pods.delete(str(self.bodies.pop(name)["metadata"]["uid"]))

    def create_claim(self, name: str, pod: str, pod_uid: str) -> None:
        self.cluster.create(claim_body(name, pod, pod_uid))


class KubeAdmin:
    def __init__(self, api: client.ApiClient) -> None:
        self.source = KubeCluster(api)
        self.core: Any = client.CoreV1Api(api)
        self.resource: Any = client.ResourceV1Api(api)

    def create_pod(self, name: str, node: str, claim: str) -> str:
        made = self.core.create_namespaced_pod(NAMESPACE, pod_body(name, node))
        self.core.patch_namespaced_pod_status(name, NAMESPACE, {"status": claim_statuses(claim)})
        return str(made.metadata.uid)

    def finish(self, name: str) -> None:
        self.core.patch_namespaced_pod_status(name, NAMESPACE, {"status": {"phase": "Succeeded"}})

    def delete(self, name: str) -> None:
        self.core.delete_namespaced_pod(name, NAMESPACE, grace_period_seconds=0)

    def create_claim(self, name: str, pod: str, pod_uid: str) -> None:
        body = claim_body(name, pod, pod_uid)
        self.resource.create_namespaced_resource_claim(NAMESPACE, {**body, "status": None})
        self.resource.patch_namespaced_resource_claim_status(
            name, NAMESPACE, {"status": body["status"]}
        )


@pytest.fixture(params=["memory", pytest.param("kube-v1.34.3", marks=pytest.mark.e2e)])
def admin(request: pytest.FixtureRequest) -> Iterator[Admin]:
    if request.param == "memory":
        yield MemoryAdmin()
        return
    yield KubeAdmin(plane_for(request, request.param.removeprefix("kube-")).api_client)


class Seen:
    """What a watch reported: the last word on each pod, by name."""

    def __init__(self) -> None:
        self.pods: dict[str, NodePod] = {}
        self.lists = 0
        self._lock = threading.Lock()

    def listed(self, pods: Any) -> None:
        with self._lock:
            self.lists += 1
            self.pods.update({pod.name: pod for pod in pods})

    def changed(self, pod: NodePod) -> None:
        with self._lock:
            self.pods[pod.name] = pod

    def get(self, name: str) -> NodePod | None:
        with self._lock:
            return self.pods.get(name)

    def wait(self, name: str, *, done: bool, claims: tuple[str, ...] | None = None) -> NodePod:
        """The pod once reported so (and naming `claims`: its status is written after it)."""

        def reported() -> bool | None:
            pod = self.get(name)
            return (pod is not None and pod.done is done and claims in (None, pod.claims)) or None

        wait_for(
            reported,
            timeout=WAIT_S,
            what=f"{name} reported {'done' if done else 'running'}",
        )
        found = self.get(name)
        assert found is not None
        return found


def listed_watch(admin: Admin, node: str, seen: Seen) -> Stoppable:
    """A watch on `node`'s pods, once it has listed them."""
    watch = admin.source.watch_node_pods(
        node=NodeName(node), on_list=seen.listed, on_pod=seen.changed
    )
    wait_for(lambda: seen.lists >= 1 or None, timeout=WAIT_S, what="the first list")
    return watch


def names() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:6]
    return f"node-{tag}", f"pod-{tag}"


def test_bound_pods_are_listed_then_their_end_is_reported(admin: Admin) -> None:
    node, pod = names()
    uid = admin.create_pod(pod, node, f"{pod}-npu")
    seen = Seen()
    watch = admin.source.watch_node_pods(
        node=NodeName(node), on_list=seen.listed, on_pod=seen.changed
    )
    try:
        found = seen.wait(pod, done=False, claims=(f"{pod}-npu",))
        assert (found.uid, found.namespace) == (uid, NAMESPACE)
        admin.finish(pod)
        seen.wait(pod, done=True)
    finally:
        watch.stop()
        admin.delete(pod)


def test_pods_bound_later_come_and_their_deletion_comes_done(admin: Admin) -> None:
    node, pod = names()
    seen = Seen()
    watch = listed_watch(admin, node, seen)
    try:
        admin.create_pod(f"{pod}-elsewhere", f"{node}-other", "x")
        admin.create_pod(pod, node, f"{pod}-npu")
        seen.wait(pod, done=False, claims=(f"{pod}-npu",))
        admin.delete(pod)
        seen.wait(pod, done=True)
        assert seen.get(f"{pod}-elsewhere") is None
    finally:
        watch.stop()
        admin.delete(f"{pod}-elsewhere")


def test_a_claim_is_read_with_its_owner_and_reservations(admin: Admin) -> None:
    node, pod = names()
    uid = admin.create_pod(pod, node, f"{pod}-npu")
    try:
        admin.create_claim(f"{pod}-npu", pod, uid)
        claim = admin.source.read_claim(
            namespace=Namespace(NAMESPACE), name=ClaimName(f"{pod}-npu")
        )
        assert (claim.owner, claim.reserved_for) == (uid, (uid,))
        assert claim.allocation is not None
        assert [r.device for r in claim.allocation.results] == ["npu-0"]
    finally:
        admin.delete(pod)


def test_a_stopped_watch_reports_nothing(admin: Admin) -> None:
    node, pod = names()
    seen = Seen()
    listed_watch(admin, node, seen).stop()
    admin.create_pod(pod, node, f"{pod}-npu")
    try:
        time.sleep(0.5)  # a watch event in flight would have arrived
        assert seen.get(pod) is None
    finally:
        admin.delete(pod)
