"""Pods bound to a plugin's node with claims generated for them, for benchmarks/vs_go.py's
"pod bound first" rows: what the kubelet sees before it calls NodePrepareResources.

Each pod is staged untimed as the resourceclaim controller and the scheduler leave it: the pod
(spec.resourceClaims naming a template; a scheduler name no scheduler has, so only this module
binds it), one claim per device, controlled by the pod, allocated to the device and reserved for
the pod, and the pod's status.resourceClaimStatuses naming them. Then, per call, as the kubelet
does: the binding, each claim read (the kubelet's own GET before it calls the plugin), and the
prepare (timed by the caller). npu-dra runs with --claim-prefetch, so its watch sees the
binding; the Go test driver and the py-gRPC floor ignore pods, and read at prepare as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from benchmarks._contenders import Running
from tests.support.controlplane import ControlPlane
from tests.support.kubelet import WireClaim, allocated_claim

LABEL = "npu-dra-bench/bound-pod"
TEMPLATE = "vs-go-unread"  # named by the pods, never read: their claims are made here


@dataclass
class StagedPod:
    name: str
    node: str
    claims: list[WireClaim]


def _pod(name: str, claims: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {LABEL: "yes"}},
        "spec": {
            "schedulerName": "nobody",
            "containers": [{"name": "c", "image": "registry.invalid/none:0"}],
            "resourceClaims": [
                {"name": f"c{n}", "resourceClaimTemplateName": TEMPLATE} for n in range(claims)
            ],
        },
    }


def stage(
    plane: ControlPlane, plugin: Running, *, node: str, devices: Sequence[str], name: str, ns: str
) -> StagedPod:
    core: Any = client.CoreV1Api(plane.api_client)
    resource: Any = client.ResourceV1Api(plane.api_client)
    pod = core.create_namespaced_pod(ns, _pod(name, len(devices)))
    owner = {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": pod.metadata.uid}
    reserved = {"resource": "pods", "name": name, "uid": pod.metadata.uid}
    claims = []
    for n, device in enumerate(devices):
        body = allocated_claim(
            f"{name}-c{n}", [device], namespace=ns, driver=plugin.driver, pool=node
        )
        body["metadata"]["labels"] = {LABEL: "yes"}
        body["metadata"]["ownerReferences"] = [{**owner, "controller": True}]
        made = resource.create_namespaced_resource_claim(ns, {**body, "status": None})
        status = {**body["status"], "reservedFor": [reserved]}
        resource.patch_namespaced_resource_claim_status(made.metadata.name, ns, {"status": status})
        claims.append(WireClaim(ns, made.metadata.name, made.metadata.uid))
    statuses = [{"name": f"c{n}", "resourceClaimName": c.name} for n, c in enumerate(claims)]
    core.patch_namespaced_pod_status(name, ns, {"status": {"resourceClaimStatuses": statuses}})
    return StagedPod(name, node, claims)


def bind_and_read(plane: ControlPlane, pod: StagedPod) -> None:
    """The binding, then the kubelet's read of each claim before it calls the plugin."""
    namespace = pod.claims[0].namespace
    core: Any = client.CoreV1Api(plane.api_client)
    resource: Any = client.ResourceV1Api(plane.api_client)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": pod.node},
    }
    core.create_namespaced_pod_binding(pod.name, namespace, binding, _preload_content=False)
    for claim in pod.claims:
        resource.read_namespaced_resource_claim(claim.name, namespace, _preload_content=False)


def remove_all(plane: ControlPlane, namespace: str) -> None:
    core: Any = client.CoreV1Api(plane.api_client)
    resource: Any = client.ResourceV1Api(plane.api_client)
    selector = f"{LABEL}=yes"
    core.delete_collection_namespaced_pod(
        namespace, label_selector=selector, grace_period_seconds=0
    )
    resource.delete_collection_namespaced_resource_claim(namespace, label_selector=selector)
