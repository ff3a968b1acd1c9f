"""The cluster as the simulated scheduler sees it, indexed once and updated per binding.

Nodes whose pools hold the same devices (names, attributes, capacity, sharing, taints) with
the same devices in use (held whole, or by shares consuming the same capacity), the same taints
and labels (bar the hostname), the same allocatable and the same requests of their pods
(NodeResourcesFit's filter and every score read them) answer every pod alike: the allocator runs
once per such class, not once per node, and each class keeps its nodes in a heap by (pods
bound, name) so the least-loaded member is found without a scan.
"""

import heapq
from collections.abc import Iterable, Iterator
from fractions import Fraction

import attrs

from npu_dra.domain.claims import AllocationResult
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.scheduling.bound_pods import BoundPods
from npu_dra.domain.scheduling.placement import SchedNode
from npu_dra.domain.scheduling.pod_terms import PodTerms
from npu_dra.domain.scheduling.pools import Candidate, DeviceKey, Pool, gather_pools
from npu_dra.domain.scheduling.resources import NO_USAGE, PodRequests, Resources, Usage
from npu_dra.domain.scheduling.shared_use import SharedUse, split_results

HOSTNAME = "kubernetes.io/hostname"
NO_REQUESTS = PodRequests(Resources(), Resources(), Resources())
ClassKey = tuple[int, frozenset[int], tuple[object, ...]]
# a device held by shares, by position: what they consume together (None: no capacity entry)
ShareKey = tuple[int, tuple[tuple[str, Fraction], ...] | None]


@attrs.define
class NodeState:
    node: SchedNode
    pools: tuple[Pool, ...]
    devices: tuple[Candidate, ...]
    position: dict[DeviceKey, int]
    content: int
    used: frozenset[int] = frozenset()
    usage: Usage = NO_USAGE
    shares: frozenset[ShareKey] = frozenset()

    @property
    def load(self) -> int:
        return self.usage.pods

    @property
    def key(self) -> ClassKey:
        labels = tuple(sorted((k, v) for k, v in self.node.labels.items() if k != HOSTNAME))
        return (
            self.content,
            self.used,
            (self.node.taints, labels, self.node.allocatable, self.usage, self.shares),
        )


@attrs.define
class NodeClass:
    members: set[str] = attrs.Factory(set)
    heap: list[tuple[int, str]] = attrs.Factory(list)


class ClusterIndex:
    def __init__(self, nodes: Iterable[SchedNode], slices: Iterable[ResourceSlice]) -> None:
        by_node: dict[str, list[ResourceSlice]] = {}
        for s in slices:
            by_node.setdefault(s.node_name, []).append(s)
        contents: dict[tuple[object, ...], int] = {}
        self.nodes: dict[str, NodeState] = {}
        self.classes: dict[ClassKey, NodeClass] = {}
        self.allocated: set[DeviceKey] = set()  # held whole
        self.shared = SharedUse()  # held by shares (DRAConsumableCapacity)
        self._owner: dict[DeviceKey, str] = {}  # which node publishes each device
        self.pods = BoundPods()  # what inter-pod affinity and topology spread count
        for node in sorted(nodes, key=lambda n: n.name):
            pools = gather_pools(by_node.get(node.name, []))
            devices = tuple(c for p in pools for c in p.devices)
            shape = tuple(
                (p.driver, p.incomplete, p.invalid, tuple(_shape(c) for c in p.devices))
                for p in pools
            )
            content = contents.setdefault(shape, len(contents))
            position = {c.key: i for i, c in enumerate(devices)}
            self._owner.update(dict.fromkeys(position, node.name))
            state = NodeState(node, pools, devices, position, content, usage=node.bound)
            self.nodes[node.name] = state
            self._enter(state)

    def _enter(self, state: NodeState) -> None:
        found = self.classes.setdefault(state.key, NodeClass())
        found.members.add(state.node.name)
        heapq.heappush(found.heap, (state.load, state.node.name))

    def _leave(self, state: NodeState) -> None:
        found = self.classes[state.key]
        found.members.discard(state.node.name)
        if not found.members:
            del self.classes[state.key]

    def least_loaded(self, key: ClassKey) -> str:
        """The member with the fewest pods (then the first name), skipping stale heap entries."""
        found = self.classes[key]
        while True:
            load, name = found.heap[0]
            state = self.nodes[name]
            if name in found.members and state.load == load:
                return name
            heapq.heappop(found.heap)

    def representative(self, key: ClassKey) -> NodeState:
        return self.nodes[self.least_loaded(key)]

    def members(self, key: ClassKey) -> Iterator[NodeState]:
        return (self.nodes[n] for n in sorted(self.classes[key].members))

    def bind(
        self,
        name: str,
        results: Iterable[AllocationResult],
        requests: PodRequests = NO_REQUESTS,
        pod: PodTerms | None = None,
    ) -> None:
        """A pod bound to `name`, its new claims holding the devices of `results` (a share's
        capacity, admin access nothing), its `requests` counted on the node (none for a pod a
        snapshot has bound: its node has them), its labels and terms (`pod`) among the pods
        bound."""
        if pod is not None:
            self.pods.add(name, pod)
        state = self.nodes[name]
        self._leave(state)
        whole, shares = split_results(results, consumable=True)
        self.allocated.update(whole)
        for r in shares:
            self.shared.add(r)
        self._hold(state, whole, shares)
        state.usage = state.usage.plus(requests)
        self._enter(state)

    def mark_allocated(self, results: Iterable[AllocationResult], *, consumable: bool) -> None:
        """The results of claims allocated before the run (a scenario's or snapshot's claim
        status): with DRAConsumableCapacity off the scheduler counts a share as the device
        held whole."""
        whole, shares = split_results(results, consumable=consumable)
        self.allocated.update(whole)
        by_node: dict[str, tuple[list[DeviceKey], list[AllocationResult]]] = {}
        for key in whole:
            if key in self._owner:
                by_node.setdefault(self._owner[key], ([], []))[0].append(key)
        for r in shares:
            key = (r.driver, r.pool, r.device)
            self.shared.add(r)  # on a node or not, as the scheduler counts it
            if key in self._owner:
                by_node.setdefault(self._owner[key], ([], []))[1].append(r)
        for name, (mine, theirs) in by_node.items():
            state = self.nodes[name]
            self._leave(state)
            self._hold(state, mine, theirs)
            self._enter(state)

    def _hold(
        self,
        state: NodeState,
        whole: list[DeviceKey],
        shares: list[AllocationResult],
    ) -> None:
        """The node's class key after its devices in `whole` and `shares` (both already in
        `allocated` and `shared`) are held."""
        state.used = state.used | {state.position[k] for k in whole if k in state.position}
        touched = {(r.driver, r.pool, r.device) for r in shares} & state.position.keys()
        if touched:
            kept = {s for s in state.shares if state.devices[s[0]].key not in touched}
            state.shares = frozenset(kept | {self._share_key(state, k) for k in touched})

    def _share_key(self, state: NodeState, key: DeviceKey) -> ShareKey:
        consumed = self.shared.consumed.get(key)
        return (state.position[key], None if consumed is None else tuple(sorted(consumed.items())))


def _shape(candidate: Candidate) -> tuple[object, ...]:
    device = candidate.device
    return (
        device.name,
        tuple(sorted((k, type(v).__name__, v) for k, v in device.attributes.items())),
        tuple(sorted((k, str(q)) for k, q in device.capacity.items())),
        device.allow_multiple_allocations,
        tuple(sorted(device.request_policies.items())),
        device.taints,
    )
