"""A pod's claims as the API server holds them when the scheduler takes the pod: named claims
read, and a template's claim made as the resourceclaim controller makes it; a claim that does not
exist yet keeps the pod out of the scheduling queue (PreEnqueue)."""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.claims import claim_from_api
from npu_dra.adapters.simulation_files.scenario import PodClaim, SimPod
from npu_dra.app.simulation.api_objects import ApiObjects
from npu_dra.domain.claims import ResourceClaim


def claim_for(pod: SimPod, entry: PodClaim, cluster: ApiObjects) -> ResourceClaim:
    if entry.claim is not None:
        found = cluster.get("ResourceClaim", entry.claim, pod.namespace)
        if found is None:
            raise LookupError(f"resourceclaim {pod.namespace}/{entry.claim} not found")
        return claim_from_api(found)
    template = cluster.get("ResourceClaimTemplate", entry.template or "", pod.namespace)
    if template is None:  # the resourceclaim controller makes no claim; PreEnqueue says so
        raise LookupError(
            f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet (its template '
            f"{pod.namespace}/{entry.template} not found)"
        )
    return claim_from_api(cluster.create(_generated_claim(pod, entry, template)))


def _generated_claim(pod: SimPod, entry: PodClaim, template: Mapping[str, Any]) -> dict[str, Any]:
    """What the resourceclaim controller creates for a pod's template reference."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "generateName": f"{pod.name}-{entry.name}-",
            "namespace": pod.namespace,
            "annotations": {"resource.kubernetes.io/pod-claim-name": entry.name},
        },
        "spec": template["spec"]["spec"],
    }
