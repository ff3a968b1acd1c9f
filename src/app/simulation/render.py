"""Printing a simulation: slices as `kubectl get resourceslices -o yaml` would, an allocation
table, and each prepared claim's CDI spec; or everything as one YAML/JSON document."""

import json
from collections.abc import Iterator
from typing import Any

import yaml

from npu_dra.adapters.cdi.codec import encode as encode_cdi
from npu_dra.app.simulation.run import PodResult, SimulationResult

HEADERS = ("POD", "CLAIM", "NODE", "REQUEST", "DEVICE", "STATUS")


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
        "cdiSpecs": {uid: encode_cdi(spec) for uid, spec in result.specs.items()},
    }


def render_text(result: SimulationResult) -> str:
    slices = {"apiVersion": "v1", "kind": "List", "items": list(result.slices)}
    parts = [
        "# ResourceSlices (as `kubectl get resourceslices -o yaml`)",
        yaml.safe_dump(slices, sort_keys=True).rstrip(),
        "",
        "# Allocations",
        _table([HEADERS, *_rows(result)]),
        "",
        "# Prepared claims: CDI specs",
    ]
    for uid, spec in result.specs.items():
        parts += [f"## claim {uid}", json.dumps(encode_cdi(spec), indent=2)]
    return "\n".join(parts)


def _keys() -> tuple[str, ...]:
    return tuple(h.lower() for h in HEADERS)


def _rows(result: SimulationResult) -> Iterator[tuple[str, ...]]:
    for pod in result.pods:
        yield from _pod_rows(pod)


def _pod_rows(pod: PodResult) -> Iterator[tuple[str, ...]]:
    name = f"{pod.pod.namespace}/{pod.pod.name}"
    if pod.node is None:
        yield (
            name,
            ",".join(c.ref.name for c in pod.claims) or "-",
            "-",
            "-",
            "-",
            f"Pending: {pod.reason}",
        )
        return
    for claim in pod.claims:
        outcome = pod.outcomes.get(claim.ref.uid)
        status = (
            "Prepared"
            if outcome and outcome.error is None
            else f"Error: {outcome and outcome.error}"
        )
        results = claim.allocation.results if claim.allocation else ()
        for r in results:
            yield (name, claim.ref.name, pod.node, r.request, r.device, status)


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )
