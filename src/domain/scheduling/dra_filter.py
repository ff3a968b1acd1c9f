"""DRA's Filter on each node class for one pod: its claims allocated on the class's
representative node, every node counted by why it fits or not (in kube-scheduler's words).
Counting is asked first: where some request has fewer devices left than it needs, no search can
allocate it, and the node is answered without one; else the search decides, and where it runs
out of simulate's step budget the node is undecided.
"""

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial

import attrs

from npu_dra.domain.claims import Allocation, DeviceClass, ResourceClaim
from npu_dra.domain.ids import DeviceClassName, NodeName
from npu_dra.domain.scheduling.allocator import SearchBudgetExceeded, allocate_claims
from npu_dra.domain.scheduling.counting import ruled_out
from npu_dra.domain.scheduling.index import ClusterIndex, NodeState
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.placed import Attempt
from npu_dra.domain.scheduling.rules import AllocatorRules

NO_FIT = "cannot allocate all claims"
NO_NODES = "no nodes available to schedule pods"  # ErrNoNodesAvailable (schedule_one.go)
UNDECIDED = "allocation search exceeded simulate's step budget"
KEPT_COUNTERS = "counters kept"  # counted in `reasons`, never one of the scheduler's reasons


def dra_filter(
    pending: Sequence[ResourceClaim],
    *,
    index: ClusterIndex,
    classes: Mapping[DeviceClassName, DeviceClass],
    matcher: Matcher,
    budget: int,
    rules: AllocatorRules,
) -> "DraFilter":
    """The filter for the pod's unallocated claims, in the cluster's state now."""
    attempt = partial(
        allocate_claims,
        pending,
        classes=classes,
        allocated=index.allocated,
        shared=index.shared,
        matcher=matcher,
        budget=budget,
        rules=rules,
    )
    counted_out = partial(
        ruled_out,
        claims=pending,
        index=index,
        classes=classes,
        matcher=matcher,
        taints=rules.device_taints,
    )
    return DraFilter(attempt, counted_out)


@attrs.define
class DraFilter:
    """DRA's Filter on each node class, with every node counted by why it fits or not."""

    attempt: Attempt  # the pod's claims allocated on one node
    counted_out: Callable[[NodeState], bool]  # counting alone rules the node out
    reasons: Counter[str] = attrs.Factory(Counter)
    undecided: list[str] = attrs.Factory(list)

    def tried(
        self, passing: list[NodeState], count: int, members: Callable[[], Iterator[NodeState]]
    ) -> tuple[Allocation, ...] | None:
        """What DRA allocates on the class's nodes; counting first, as no search is needed to
        see 16 needed of 12 free."""
        representative, noted = passing[0], set[NodeName]()
        if self.counted_out(representative):
            self.reasons[NO_FIT] += count
            return None
        try:
            found = self.attempt(
                node=NodeName(representative.node.name),
                pools=representative.pools,
                counter_notes=noted,
            )
        except SearchBudgetExceeded:
            self.reasons[UNDECIDED] += count
            nodes = passing if len(passing) == count else members()
            self.undecided += (s.node.name for s in nodes)
            return None
        self.reasons[KEPT_COUNTERS] += count if noted else 0
        self.reasons[NO_FIT if found is None else "fit"] += count
        return found
