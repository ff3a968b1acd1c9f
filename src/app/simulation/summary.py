"""A simulation in one line, for people and CI: how many pods were bound, left pending (an
Undecided pod, whose search ran out of budget, stays pending in a cluster too), gated, or hit an
error; and which pods `--fail-on-pending` fails the run for."""

from collections import Counter

from npu_dra.app.simulation.run import PodResult, SimulationResult

# PodResult.status -> the summary's word
KINDS = {
    "Bound": "bound",
    "Pending": "pending",
    "Undecided": "pending",
    "SchedulingGated": "gated",
    "Error": "error",
}
NOT_BOUND = ("pending", "error")  # what --fail-on-pending fails for (gates are the user's own)


def summary(result: SimulationResult) -> dict[str, int]:
    counted = Counter(KINDS.get(p.status, "error") for p in result.pods)
    return {"pods": len(result.pods)} | {
        k: counted[k] for k in ("bound", "pending", "gated", "error")
    }


def summary_line(result: SimulationResult) -> str:
    s = summary(result)
    return (
        f"# {s['pods']} pods: {s['bound']} bound, {s['pending']} pending, {s['gated']} gated, "
        f"{s['error']} error"
    )


def not_bound(result: SimulationResult) -> tuple[PodResult, ...]:
    return tuple(p for p in result.pods if KINDS.get(p.status, "error") in NOT_BOUND)
