"""The common what-ifs on a cluster's snapshot, as flags: `--cordon NODE,...` (the node gets the
unschedulable taint, as `kubectl cordon` gives it), `--remove-node NODE,...` (the node, its slices
and the pods bound to it are gone) and `--unhealthy NODE/DEVICE,...` (the device is left out of
its slice, as a plugin with device taints off leaves out a failed device). A name the snapshot
does not have is an error naming the flag."""

from collections.abc import Mapping
from typing import Any

import attrs

from npu_dra.adapters.simulation_files.scenario import Scenario, ScenarioError
from npu_dra.domain.scheduling.placement import SchedNode, Taint

CORDONED = Taint("node.kubernetes.io/unschedulable", "NoSchedule")


@attrs.frozen
class WhatIfs:
    cordon: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    unhealthy: tuple[tuple[str, str], ...] = ()  # (node, device)


def what_ifs(cordon: str, remove: str, unhealthy: str) -> WhatIfs:
    """The flags' comma-separated values; ScenarioError for a malformed NODE/DEVICE."""
    devices = []
    for item in _items(unhealthy):
        node, _, device = item.partition("/")
        if not node or not device:
            raise ScenarioError(f"--unhealthy {item!r}: expected NODE/DEVICE")
        devices.append((node, device))
    return WhatIfs(_items(cordon), _items(remove), tuple(devices))


def apply_what_ifs(scenario: Scenario, changes: WhatIfs) -> Scenario:
    names = {n.name for n in scenario.sched_nodes}
    for flag, wanted in (("--cordon", changes.cordon), ("--remove-node", changes.remove)):
        for name in wanted:
            if name not in names:
                raise ScenarioError(f"{flag} {name}: the snapshot has no such Node")
    removed = frozenset(changes.remove)
    nodes = tuple(
        _cordoned(n) if n.name in changes.cordon else n
        for n in scenario.sched_nodes
        if n.name not in removed
    )
    slices = tuple(
        _without_unhealthy(s, changes.unhealthy)
        for s in scenario.slices
        if s["spec"].get("nodeName") not in removed
    )
    _check_devices_found(scenario.slices, changes.unhealthy)
    bound = tuple((pod, node) for pod, node in scenario.bound if node not in removed)
    return attrs.evolve(scenario, sched_nodes=nodes, slices=slices, bound=bound)


def _items(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


def _cordoned(node: SchedNode) -> SchedNode:
    taints = node.taints if CORDONED in node.taints else (*node.taints, CORDONED)
    return attrs.evolve(node, taints=taints, unschedulable=True)


def _without_unhealthy(
    obj: Mapping[str, Any], unhealthy: tuple[tuple[str, str], ...]
) -> Mapping[str, Any]:
    node = obj["spec"].get("nodeName")
    gone = {device for n, device in unhealthy if n == node}
    if not gone:
        return obj
    devices = [d for d in obj["spec"].get("devices") or [] if d.get("name") not in gone]
    return {**obj, "spec": {**obj["spec"], "devices": devices}}


def _check_devices_found(
    slices: tuple[Mapping[str, Any], ...], unhealthy: tuple[tuple[str, str], ...]
) -> None:
    present = {
        (s["spec"].get("nodeName"), d.get("name"))
        for s in slices
        for d in s["spec"].get("devices") or []
    }
    for node, device in unhealthy:
        if (node, device) not in present:
            raise ScenarioError(f"--unhealthy {node}/{device}: the snapshot has no such device")
