"""A pod's cpu, memory and ephemeral-storage requests against a node's allocatable: what
NodeResourcesFit filters on, and the sums its scoring and NodeResourcesBalancedAllocation read.

Filter: kubernetes v1.34.3 pkg/scheduler/framework/plugins/noderesources/fit.go `fitsRequest`
(v1.36.3 alike for these resources): one pod more than the node's `pods` is "Too many pods"; a
non-zero request above the node's allocatable less what its pods request is "Insufficient
<resource>", each reason counted on its own in the "0/N nodes are available" message. A node's
`requested` and `nonzero` are the sums NodeInfo keeps of its pods (pkg/scheduler/framework/
types.go `NodeInfo.update`: Requested, and NonZeroRequested of `PodInfo.CalculateResource`).
"""

import attrs

GIB = 1 << 30
MIB = 1 << 20
TOO_MANY_PODS = "Too many pods"


@attrs.frozen(cache_hash=True)  # part of every node class's key (domain/scheduling/index.py)
class Resources:
    cpu: int = 0  # millicores (Quantity.MilliValue: rounded up)
    memory: int = 0  # bytes (Quantity.Value: rounded up)
    storage: int = 0  # ephemeral-storage, bytes
    # fit.go's ScalarResources, by name: extended resources (a classic device plugin's),
    # hugepages, names under kubernetes.io/ (DRA's implicit extended resource names among them)
    scalar: tuple[tuple[str, int], ...] = ()

    def __add__(self, other: "Resources") -> "Resources":
        scalar = dict(self.scalar)
        for name, amount in other.scalar:
            scalar[name] = scalar.get(name, 0) + amount
        return Resources(
            self.cpu + other.cpu,
            self.memory + other.memory,
            self.storage + other.storage,
            tuple(sorted(scalar.items())),
        )

    def named(self) -> tuple[tuple[str, int], ...]:
        return (
            ("cpu", self.cpu),
            ("memory", self.memory),
            ("ephemeral-storage", self.storage),
            *self.scalar,
        )

    def without(self, names: "frozenset[str]") -> "Resources":
        """These resources less the scalar ones named (those DRA serves instead)."""
        kept = tuple((n, a) for n, a in self.scalar if n not in names)
        return self if kept == self.scalar else attrs.evolve(self, scalar=kept)


# pkg/scheduler/util/pod_resources.go: DefaultMilliCPURequest, DefaultMemoryRequest
NON_ZERO = Resources(100, 200 * MIB)


@attrs.frozen(cache_hash=True)
class Allocatable:
    """Node.status.allocatable. The default is what tests/support/controlplane.py's
    `create_ready_node` gives the differential test's nodes (keep the two equal)."""

    resources: Resources = Resources(8000, 32 * GIB)
    pods: int = 110


@attrs.frozen
class PodRequests:
    """One pod's requests three ways, as the scheduler computes them (pod_requests.py)."""

    requested: Resources = Resources()  # what Fit checks, what the node's Requested gains
    scored: Resources = NON_ZERO  # cpu, memory as NodeResourcesFit's LeastAllocated scores it
    held: Resources = NON_ZERO  # cpu, memory it adds to its node's NonZeroRequested

    def without(self, names: frozenset[str]) -> "PodRequests":
        """These requests less the scalar resources named (those DRA serves instead)."""
        return PodRequests(
            self.requested.without(names), self.scored.without(names), self.held.without(names)
        )

    @property
    def best_effort(self) -> bool:
        """BalancedAllocation's PreScore skips a pod that requests no cpu and no memory."""
        return not self.requested.cpu and not self.requested.memory


@attrs.frozen(cache_hash=True)
class Usage:
    """What a node's pods request: NodeInfo's Requested, NonZeroRequested and pod count."""

    requested: Resources = Resources()
    nonzero: Resources = Resources()
    pods: int = 0

    def plus(self, pod: PodRequests, *, pods: int = 1) -> "Usage":
        return Usage(self.requested + pod.requested, self.nonzero + pod.held, self.pods + pods)

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.requested + other.requested, self.nonzero + other.nonzero, self.pods + other.pods
        )


DEFAULT_ALLOCATABLE = Allocatable()
NO_USAGE = Usage()
EMPTY_CONTAINER = PodRequests()  # a pod with one container that requests nothing


def insufficient(pod: PodRequests, allocatable: Allocatable, usage: Usage) -> tuple[str, ...]:
    """Why the pod does not fit the node's resources (fitsRequest's reasons, in its order)."""
    reasons = [TOO_MANY_PODS] if usage.pods + 1 > allocatable.pods else []
    have = dict(allocatable.resources.named())
    used = dict(usage.requested.named())
    for name, wanted in pod.requested.named():
        if wanted > 0 and wanted > have.get(name, 0) - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return tuple(reasons)
