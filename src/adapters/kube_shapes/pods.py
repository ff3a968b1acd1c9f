"""A Pod (core/v1) as the claim prefetch sees it (domain NodePod): its UID, the claims generated
for it, and whether it is done."""

from collections.abc import Mapping
from typing import Any

from npu_dra.domain.attributes import is_dns_label, is_dns_subdomain
from npu_dra.domain.claims import NodePod
from npu_dra.domain.ids import ClaimName, Namespace

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
MAX_POD_CLAIMS = 128  # more than the API server lets a pod name in spec.resourceClaims


def node_pod(obj: Mapping[str, Any], *, deleted: bool = False) -> NodePod | None:
    """The pod as the prefetch sees it; None for an object that is not a well-formed pod (the
    prefetch then knows nothing of it, and its claims are read at prepare)."""
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    uid, namespace, name = meta.get("uid"), meta.get("namespace"), meta.get("name")
    if not (
        isinstance(uid, str) and uid and isinstance(namespace, str) and is_dns_label(namespace)
    ):
        return None
    entries = status.get("resourceClaimStatuses")
    claims = tuple(
        ClaimName(generated)
        for entry in (entries if isinstance(entries, list) else [])[:MAX_POD_CLAIMS]
        if isinstance(entry, Mapping)
        and isinstance(generated := entry.get("resourceClaimName"), str)
        and is_dns_subdomain(generated)
    )
    done = deleted or bool(meta.get("deletionTimestamp")) or status.get("phase") in TERMINAL_PHASES
    return NodePod(uid, Namespace(namespace), str(name), claims, done)
