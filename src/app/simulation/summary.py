"""A simulation in one line, for people and CI: how many pods were bound, left pending (an
Undecided pod, whose search ran out of budget, stays pending in a cluster too), gated, or hit an
error, and how many objects were refused (left out, as the API server refuses them); and which
pods `--fail-on-pending` fails the run for."""

from collections import Counter

from npu_dra.app.simulation.pod_decision import PodResult
from npu_dra.app.simulation.run import SimulationResult

# PodResult.status -> the summary's word
KINDS = {
    "Bound": "bound",
    "Pending": "pending",
    "Undecided": "pending",
    "SchedulingGated": "gated",
    "Error": "error",
}
NOT_BOUND = ("pending", "error")  # what --fail-on-pending fails for (gates are the user's own)
REFUSED_EXIT = 4  # npu-dra simulate's exit status when it left objects out (commands/simulate.py)


def summary(result: SimulationResult) -> dict[str, int]:
    counted = Counter(KINDS.get(p.status, "error") for p in result.pods)
    return (
        {"pods": len(result.pods)}
        | {k: counted[k] for k in ("bound", "pending", "gated", "error")}
        | {"refused": len(result.refused)}
    )


def summary_line(result: SimulationResult) -> str:
    s = summary(result)
    refused = s["refused"]
    objects = "object" if refused == 1 else "objects"
    return (
        f"# {s['pods']} pods: {s['bound']} bound, {s['pending']} pending, {s['gated']} gated, "
        f"{s['error']} error"
    ) + (f"; {refused} {objects} refused (exit {REFUSED_EXIT})" if refused else "")


def not_bound(result: SimulationResult) -> tuple[PodResult, ...]:
    return tuple(p for p in result.pods if KINDS.get(p.status, "error") in NOT_BOUND)
