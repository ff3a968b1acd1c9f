"""A scenario's Pod objects, as the run needs them: the claims they reference (by name or by
template), their containers checked as the API server requires, scheduling gates, placement
and the extended resources DRA may serve.
"""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.adapters.simulation_files.scenario import PodClaim, SimPod
from npu_dra.adapters.simulation_files.scenario_placement import pod_placement
from npu_dra.domain.scheduling.extended import extended_requests


def sim_pod(doc: Mapping[str, Any]) -> SimPod:
    root = Fields(doc, obj=describe(doc))
    meta = root.sub("metadata")
    spec = root.sub("spec")
    claims = tuple(_pod_claim(entry) for entry in spec.items("resourceClaims"))
    containers = spec.items("containers")
    if not containers:
        raise spec.fail("containers", "Required value")
    for container in containers:
        container.need("name", str)
        container.need("image", str)
    gates = tuple(g.need("name", str) for g in spec.items("schedulingGates"))
    return SimPod(
        meta.get("namespace", str, "default"),
        meta.need("name", str),
        claims,
        pod_placement(spec, meta),
        gates,
        extended_requests(doc.get("spec") or {}),
    )


def _pod_claim(entry: Fields) -> PodClaim:
    claim = entry.opt("resourceClaimName", str)
    template = entry.opt("resourceClaimTemplateName", str)
    if (claim is None) == (template is None):
        raise entry.fail(
            "resourceClaimName", "exactly one of resourceClaimName, resourceClaimTemplateName"
        )
    return PodClaim(entry.need("name", str), claim, template)
