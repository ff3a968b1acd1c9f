"""Printing a simulation. `table` (the default) is what a person reads at a glance: a nodes and
devices table and a pods table. `yaml`/`json` keep the full objects: the ResourceSlices as the
API serves them, every allocation row and each prepared claim's CDI spec.
"""

import json
from collections.abc import Iterator
from typing import Any

import yaml

from npu_dra.adapters.cdi.codec import encode as encode_cdi
from npu_dra.app.simulation.pod_decision import PodResult
from npu_dra.app.simulation.render_capacity import capacity_document, capacity_rows
from npu_dra.app.simulation.render_devices import counter_rows, device_rows
from npu_dra.app.simulation.render_explain import explain_document, explain_section
from npu_dra.app.simulation.render_refused import refused_document, refused_rows
from npu_dra.app.simulation.render_shares import device_text, result_document, share_notes
from npu_dra.app.simulation.run import SimulationResult
from npu_dra.app.simulation.summary import summary, summary_line
from npu_dra.domain.scheduling.versions import scheduler_version

HEADERS = ("POD", "CLAIM", "NODE", "REQUEST", "DEVICE", "STATUS")
DEVICE_HEADERS = ("NODE", "DEVICE", "CHIP", "NUMA", "GROUP", "MEMORY", "HEALTH", "ALLOCATED-TO")
POD_HEADERS = ("POD", "CLAIM", "NODE", "DEVICES", "STATUS")
COUNTER_HEADERS = ("NODE", "COUNTER-SET", "COUNTER", "TOTAL", "IN-USE")
LEGEND = (
    "# 'node (any of N)': the scheduler may pick any of N nodes: they tie for the best score (it\n"
    "# breaks ties at random), or, with 100 nodes or more, they all fit (it scores only some).\n"
    "# 'devices (or others)': the scheduler walks a node's slices in random order and may pick\n"
    "# the others. Later pods assume the choices shown first."
)


def render(result: SimulationResult, output: str) -> str:
    if output == "json":
        return json.dumps(as_document(result), indent=2, sort_keys=True)
    if output == "yaml":
        return yaml.safe_dump(as_document(result), sort_keys=True)
    return render_text(result)


def as_document(result: SimulationResult) -> dict[str, Any]:
    return {
        "resourceSlices": list(result.slices),
        "allocations": [dict(zip(_keys(), row, strict=True)) for row in _rows(result)],
        "pods": [_pod_document(p) for p in result.pods],
        "cdiSpecs": {uid: encode_cdi(spec) for uid, spec in result.specs.items()},
        "summary": summary(result),
        "refused": refused_document(result),
        "decidedAs": _decided_as(result),
        "capacity": capacity_document(result),
        "warnings": list(result.warnings),
    }


def _decided_as(result: SimulationResult) -> dict[str, Any]:
    version = result.version or scheduler_version()
    return {
        "kubernetesVersion": version.version,
        "featureGates": dict(version.gates),
        "allocator": version.variant,
        **share_notes(result),
    }


def render_text(result: SimulationResult) -> str:
    return "\n".join(
        [
            "# Nodes and devices",
            _table([DEVICE_HEADERS, *device_rows(result)]),
            "",
            *_counters_section(result),
            *_capacity_section(result),
            "# Pods (in creation order)",
            _table([POD_HEADERS, *_pod_table_rows(result)]),
            "",
            *explain_section(result),
            *_refused_section(result),
            f"# Decided as {(result.version or scheduler_version()).label}.",
            LEGEND,
            summary_line(result),
        ]
    )


def _capacity_section(result: SimulationResult) -> list[str]:
    by_chip, by_group = capacity_rows(result)
    return [
        "# Capacity (devices per chip model, and per node group)",
        _table(by_chip),
        "",
        _table(by_group),
        "",
    ]


def _refused_section(result: SimulationResult) -> list[str]:
    rows = refused_rows(result)
    if not rows:
        return []
    return ["# Refused objects (left out: the API server would refuse them)", _table(rows), ""]


def _counters_section(result: SimulationResult) -> list[str]:
    rows = sorted(counter_rows(result))
    if not rows:
        return []
    return ["# Shared counters (partitionable devices)", _table([COUNTER_HEADERS, *rows]), ""]


def _pod_table_rows(result: SimulationResult) -> Iterator[tuple[str, ...]]:
    for pod in result.pods:
        name = f"{pod.pod.namespace}/{pod.pod.name}"
        node = "-" if pod.node is None else _node_text(pod)
        claims = pod.claims or ()
        if not claims:
            yield (name, "-", node, "-", status_text(pod))
        for claim in claims:
            devices = claim.allocation.results if claim.allocation and pod.node else ()
            listed = ",".join(device_text(r) for r in devices) or "-"
            for other in pod.other_choices:
                if claim.ref.name in other:
                    listed += f" (or {','.join(other[claim.ref.name])})"
            yield (name, claim.ref.name, node, listed, status_text(pod))


def _node_text(pod: PodResult) -> str:
    if pod.fitting > 1:
        return f"{pod.node} (any of {pod.fitting})"
    return str(pod.node)


def status_text(pod: PodResult) -> str:
    """The status column: the status and its reason, or the prepare error."""
    errors = [o.error for o in pod.outcomes.values() if o.error]
    if errors:
        return f"Error: {errors[0]}"
    if pod.reason:
        return f"{pod.status}: {pod.reason}"
    return pod.status


def _pod_document(pod: PodResult) -> dict[str, Any]:
    return {
        "pod": f"{pod.pod.namespace}/{pod.pod.name}",
        "status": pod.status,
        "node": pod.node,
        "nodesThatFit": pod.fitting,
        "reason": pod.reason,
        "claims": {
            c.ref.name: [
                result_document(r)
                for r in (c.allocation.results if c.allocation and pod.node else ())
            ]
            for c in pod.claims
        },
        "otherChoices": [
            {claim: list(devices) for claim, devices in choice.items()}
            for choice in pod.other_choices
        ],
        "explain": explain_document(pod),
    }


def _keys() -> tuple[str, ...]:
    return tuple(h.lower() for h in HEADERS)


def _rows(result: SimulationResult) -> Iterator[tuple[str, ...]]:
    for pod in result.pods:
        yield from _pod_rows(pod)


def _pod_rows(pod: PodResult) -> Iterator[tuple[str, ...]]:
    name = f"{pod.pod.namespace}/{pod.pod.name}"
    if pod.node is None:
        claims = ",".join(c.ref.name for c in pod.claims) or "-"
        yield (name, claims, "-", "-", "-", f"{pod.status}: {pod.reason}")
        return
    for claim in pod.claims:
        outcome = pod.outcomes.get(claim.ref.uid)
        status = "Prepared" if outcome and outcome.error is None else status_text(pod)
        results = claim.allocation.results if claim.allocation else ()
        for r in results:
            yield (name, claim.ref.name, pod.node, r.request, r.device, status)


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )
