"""Which free devices a container should get, for the device plugin's GetPreferredAllocation.

The kubelet picks devices without knowing the HCCS topology, and Huawei's own plugin offers no
preference, so a plain kubelet can split a 4-chip job across the two rings of a 910 A+X server.
Chips talk fastest inside one HCCS ring (two rings of four on 910 A+X, one full mesh on 910B) and
then inside one NUMA node, so the choice keeps a request in as few rings, then NUMA nodes, as it
can. Among groups that can hold it, it takes the one left with the fewest free chips, an even
number first, so later requests of 1, 2 or 4 chips still find whole groups (Huawei's ring table:
one chip goes to a ring with 1 free, then 3, 2, 4). Pure and deterministic: the same inventory
and request give the same answer, ties going to the lowest physical id.
"""

from collections.abc import Callable, Iterable, Sequence

from npu_dra.domain.device import Device
from npu_dra.domain.ids import DeviceName

GroupKey = Callable[[Device], str | int | None]

LEVELS: tuple[GroupKey, ...] = (lambda d: d.topology_group, lambda d: d.numa_node)


def preferred_devices(
    devices: Iterable[Device],
    *,
    available: Iterable[DeviceName],
    must_include: Iterable[DeviceName],
    size: int,
) -> tuple[DeviceName, ...]:
    """`must_include` first, then the best `size - len(must_include)` of `available`.

    Only ids of `available` ever come back (a `must_include` id the kubelet did not offer is
    dropped), never more than `size` of them. Names this node does not know are never chosen;
    fewer than `size` names come back when too few are available, and the kubelet fills the
    rest itself.
    """
    known = {d.name: d for d in devices}
    offered = set(available)
    must = tuple(n for n in dict.fromkeys(must_include) if n in offered)[: max(size, 0)]
    free = _ordered(known[n] for n in offered - set(must) if n in known)
    anchors = [known[n] for n in must if n in known]
    chosen = _pick(free, size - len(must), anchors, LEVELS)
    return must + tuple(d.name for d in _ordered(chosen))


def _pick(
    free: Sequence[Device], need: int, anchors: Sequence[Device], levels: Sequence[GroupKey]
) -> list[Device]:
    if need <= 0:
        return []
    if not levels or need >= len(free):
        return list(free[:need])
    key, finer = levels[0], levels[1:]
    groups = _grouped(free, key)
    homes = {key(a) for a in anchors}
    fitting = [g for g in groups if len(groups[g]) >= need]
    if fitting:
        best = min(fitting, key=lambda g: _fit_rank(g, groups[g], need, homes))
        return _pick(groups[best], need, anchors, finer)
    # No group holds the request: take the largest whole group, then place the rest anew.
    largest = min(
        groups, key=lambda g: (g not in homes, g is None, -len(groups[g]), _first(groups[g]))
    )
    rest = _ordered(d for g, members in groups.items() if g != largest for d in members)
    return groups[largest] + _pick(rest, need - len(groups[largest]), anchors, levels)


def _fit_rank(
    group: str | int | None, members: Sequence[Device], need: int, homes: set[str | int | None]
) -> tuple[bool, bool, int, int, int]:
    leftover = len(members) - need
    return (group not in homes, group is None, leftover % 2, leftover, _first(members))


def _grouped(free: Sequence[Device], key: GroupKey) -> dict[str | int | None, list[Device]]:
    groups: dict[str | int | None, list[Device]] = {}
    for device in free:
        groups.setdefault(key(device), []).append(device)
    return groups


def _first(members: Sequence[Device]) -> int:
    return members[0].physical_id


def _ordered(devices: Iterable[Device]) -> list[Device]:
    return sorted(devices, key=lambda d: (d.physical_id, d.name))
