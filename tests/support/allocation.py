"""The scheduler's node loop in small, over the offline allocator, for allocation tests."""

from collections.abc import Mapping, Sequence

import attrs

from npu_dra.domain.claims import Allocation, DeviceClass, ResourceClaim
from npu_dra.domain.ids import DeviceClassName, NodeName
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.scheduling.allocator import AllocationError, allocate_claims
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.pools import DeviceKey, gather_pools
from npu_dra.domain.scheduling.ports import SelectorEvaluator


@attrs.frozen
class Unsatisfiable:
    reason: str


def allocate(
    wanted: ResourceClaim,
    *,
    slices: Sequence[ResourceSlice],
    classes: Mapping[DeviceClassName, DeviceClass],
    in_use: frozenset[DeviceKey],
    evaluator: SelectorEvaluator,
    others: Sequence[ResourceClaim] = (),
) -> Allocation | Unsatisfiable:
    """The scheduler's loop in small: nodes by name, the first that fits wins; an allocator
    error stops the search (the scheduler fails the pod with it)."""
    by_node: dict[str, list[ResourceSlice]] = {}
    for s in slices:
        by_node.setdefault(s.node_name, []).append(s)
    matcher = Matcher(evaluator)
    for name in sorted(by_node):
        try:
            found = allocate_claims(
                [wanted, *others],
                node=NodeName(name),
                pools=gather_pools(by_node[name]),
                classes=classes,
                allocated=in_use,
                matcher=matcher,
            )
        except AllocationError as error:
            return Unsatisfiable(str(error))
        if found is not None:
            return found[0]
    return Unsatisfiable("cannot allocate all claims" if by_node else "no ResourceSlices")
