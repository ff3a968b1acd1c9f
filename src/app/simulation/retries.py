"""Pods the scheduler tries again once a later pod is bound: a pod that InterPodAffinity refused
(no pod its required affinity selects ran where it could go) goes back to the queue when a pod
its terms select is bound (kube-scheduler v1.34.3 pkg/scheduler/framework/plugins/
interpodaffinity/plugin.go `isSchedulableAfterPodChange`; v1.36.3 alike), and is tried again.
Its backoff (1 s at first) outlasts the few milliseconds each of the pods waiting behind it
takes, so simulate tries it again after them, in creation order, until no retry binds a pod
another waits for. A retried pod keeps the claims made for it on its first try."""

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from npu_dra.adapters.simulation_files.scenario import PodClaim, SimPod
from npu_dra.domain.scheduling.pod_affinity import AFFINITY_NOT_MATCHED
from npu_dra.domain.scheduling.pod_terms import Namespaces, PodTerms

if TYPE_CHECKING:
    from npu_dra.app.simulation.pod_decision import PodResult


def retried(
    results: list["PodResult"], decide: Callable[[SimPod], "PodResult"], namespaces: Namespaces
) -> list["PodResult"]:
    """The results with the waiting pods tried again as the scheduler would."""
    log: list[PodTerms] = []  # the pods bound, in binding order
    seen: dict[int, int] = {}  # waiting pod -> how many were bound at its last try
    for i, result in enumerate(results):
        if _waits(result):
            seen[i] = len(log)
        if result.node is not None:
            log.append(result.pod.placement.pod)
    tried = True
    while tried:
        tried = False
        for i in sorted(seen):
            terms = results[i].pod.placement.pod.affinity
            if not any(t.matches(b, namespaces) for b in log[seen[i] :] for t in terms):
                continue
            tried, seen[i] = True, len(log)
            results[i] = decide(_with_made_claims(results[i]))
            if results[i].node is not None:
                log.append(results[i].pod.placement.pod)
            if not _waits(results[i]):
                del seen[i]
    return results


def _waits(result: "PodResult") -> bool:
    return (
        result.status == "Pending"
        and bool(result.pod.placement.pod.affinity)
        and AFFINITY_NOT_MATCHED in (result.reason or "")
    )


def _with_made_claims(result: "PodResult") -> SimPod:
    """The pod naming the claims its templates made on the first try, as the resourceclaim
    controller's claims stay for it."""
    pod, made = result.pod, result.claims
    claims = tuple(
        PodClaim(c.name, made[i].ref.name, None) if c.template and i < len(made) else c
        for i, c in enumerate(pod.claims)
    )
    return attrs.evolve(pod, claims=claims)
