"""The objects a run left out because the API server would refuse them at create: a section of
the table, and the documents' `refused` list (kind, namespace, name, field, reason)."""

from typing import Any

import attrs

from npu_dra.app.simulation.run import SimulationResult

HEADERS = ("KIND", "OBJECT", "FIELD", "REASON")


def refused_document(result: SimulationResult) -> list[dict[str, Any]]:
    return [attrs.asdict(r) for r in result.refused]


def refused_rows(result: SimulationResult) -> list[tuple[str, ...]]:
    """The table's rows, headers first; none when nothing was refused."""
    if not result.refused:
        return []
    return [
        HEADERS,
        *(
            (r.kind, f"{r.namespace}/{r.name}" if r.namespace else r.name, r.field, r.reason)
            for r in result.refused
        ),
    ]
