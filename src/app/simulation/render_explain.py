"""`--explain` in print: for each pending pod, its nodes grouped by the first reason each fails
(the JSON and YAML documents carry the same under the pod's `explain`)."""

from typing import Any

from npu_dra.app.simulation.pod_decision import PodResult
from npu_dra.app.simulation.run import SimulationResult

SHOWN_NODES = 5  # node names printed per reason in the table; the documents list them all


def explain_document(pod: PodResult) -> list[dict[str, Any]]:
    return [{"reason": r.reason, "nodes": list(r.nodes)} for r in pod.explanation]


def explain_section(result: SimulationResult) -> list[str]:
    pending = [p for p in result.pods if p.explanation]
    if not pending:
        return []
    lines = ["# Why pods are pending (per node: the first reason it fails)"]
    for pod in pending:
        lines.append(f"{pod.pod.namespace}/{pod.pod.name}")
        for r in pod.explanation:
            if not r.nodes:  # no node to name: the cluster has none
                lines.append(f"  {r.reason}")
                continue
            names = ", ".join(r.nodes[:SHOWN_NODES])
            if len(r.nodes) > SHOWN_NODES:
                names += f" and {len(r.nodes) - SHOWN_NODES} more"
            lines.append(f"  {len(r.nodes)} node(s) ({names}): {r.reason}")
    return [*lines, ""]
