"""The capacity summary: how many devices the cluster has, how many are allocated, free, or
unusable (left out of their slice, or published with a taint), per chip model and per node group
(nodes of one shape: chip model and devices per node). Read off the devices table, so both say
the same; a chip one of whose vNPUs is held counts as allocated."""

from collections.abc import Iterable, Iterator
from typing import Any

import attrs

from npu_dra.app.simulation.render_devices import device_rows
from npu_dra.app.simulation.run import SimulationResult

CAPACITY_HEADERS = ("CHIP", "NODES", "DEVICES", "ALLOCATED", "FREE", "UNUSABLE")
GROUP_HEADERS = ("NODE-GROUP", "NODES", "DEVICES", "ALLOCATED", "FREE", "UNUSABLE")
STATES = ("allocated", "free", "unusable")


@attrs.define
class _Device:
    node: str
    chip: str
    state: str  # one of STATES


def capacity_document(result: SimulationResult) -> dict[str, list[dict[str, Any]]]:
    devices = list(_devices(device_rows(result)))
    shapes = _shapes(devices)
    return {
        "byChip": _totals(devices, "chip", lambda d: d.chip),
        "byNodeGroup": _totals(devices, "group", lambda d: shapes[d.node]),
    }


def capacity_rows(result: SimulationResult) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The two tables' rows, headers first: per chip model, per node group."""
    document = capacity_document(result)
    tables = []
    for key, headers in (("byChip", CAPACITY_HEADERS), ("byNodeGroup", GROUP_HEADERS)):
        name = "chip" if key == "byChip" else "group"
        rows = [
            tuple(str(t[k]) for k in (name, "nodes", "devices", *STATES)) for t in document[key]
        ]
        tables.append([headers, *rows])
    return tables[0], tables[1]


def _devices(rows: Iterable[tuple[str, ...]]) -> Iterator[_Device]:
    """Each chip of the devices table with its state; its vNPU rows (indented) mark it held."""
    last: _Device | None = None
    for node, name, chip, _, _, _, health, held in rows:
        if name.startswith(" "):
            if last is not None and held != "-":
                last.state = "allocated"
            continue
        if last is not None:
            yield last
        state = "allocated" if held != "-" else "free"
        if state == "free" and ("not published" in health or "tainted" in health):
            state = "unusable"
        last = _Device(node, chip if chip != "-" else "(unknown)", state)
    if last is not None:
        yield last


def _shapes(devices: list[_Device]) -> dict[str, str]:
    """Each node's group: its devices' count and chip model(s)."""
    chips: dict[str, list[str]] = {}
    for d in devices:
        chips.setdefault(d.node, []).append(d.chip)
    return {node: f"{len(found)} x {'+'.join(sorted(set(found)))}" for node, found in chips.items()}


def _totals(devices: list[_Device], name: str, key: Any) -> list[dict[str, Any]]:
    totals: dict[str, dict[str, Any]] = {}
    nodes: dict[str, set[str]] = {}
    for d in devices:
        found = totals.setdefault(key(d), {name: key(d), "devices": 0, **dict.fromkeys(STATES, 0)})
        found["devices"] += 1
        found[d.state] += 1
        nodes.setdefault(key(d), set()).add(d.node)
    return [{**totals[k], "nodes": len(nodes[k])} for k in sorted(totals)]
