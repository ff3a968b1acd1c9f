"""A decision's devices on the node chosen: the allocation found on its class's representative,
moved by position to the chosen node (an identical one), and the other allocations the scheduler
may make there, since it walks a node's pools and slices in random order.
"""

from collections.abc import Callable, Sequence

import attrs

from npu_dra.domain.claims import Allocation, ResourceClaim
from npu_dra.domain.ids import NodeName
from npu_dra.domain.scheduling.allocator import AllocationError, SearchBudgetExceeded
from npu_dra.domain.scheduling.index import NodeState
from npu_dra.domain.scheduling.pools import Pool, walk_orders

Attempt = Callable[..., tuple[Allocation, ...] | None]  # allocate_claims for one pod's claims


def placed(
    claims: Sequence[ResourceClaim],
    found: tuple[Allocation, ...],
    representative: NodeState,
    target: NodeState,
) -> tuple[Allocation | None, ...]:
    """One entry per claim: its new allocation on the target node, None if it had one."""
    moved = iter(_moved(a, representative, target) for a in found)
    return tuple(next(moved) if c.allocation is None else None for c in claims)


def other_choices(
    allocate: Attempt,
    pools: tuple[Pool, ...],
    found: tuple[Allocation, ...],
) -> list[tuple[Allocation, ...]]:
    """The distinct allocations `allocate` (on one node) gives when the node's pools and slices
    are walked in the other orders (none when it has one slice, the common case)."""
    seen = {_devices(found)}
    others = []
    for order in walk_orders(pools):
        try:
            other = allocate(pools=order)
        except (AllocationError, SearchBudgetExceeded):
            continue
        if other is not None and _devices(other) not in seen:
            seen.add(_devices(other))
            others.append(other)
    return others


def _devices(found: tuple[Allocation, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(sorted(r.device for r in a.results)) for a in found)


def _moved(allocation: Allocation, source: NodeState, target: NodeState) -> Allocation:
    """The same devices, by position, on an equivalent node."""
    if source is target:
        return allocation
    results = []
    for r in allocation.results:
        c = target.devices[source.position[(r.driver, r.pool, r.device)]]
        results.append(attrs.evolve(r, driver=c.driver, pool=c.pool, device=c.device.name))
    return Allocation(tuple(results), NodeName(target.node.name), allocation.config)
