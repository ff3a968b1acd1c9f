"""How a node's stored ResourceSlices become the desired ones (the resourceslice controller's
generation rules): nothing changes if the content is equal; otherwise every slice of the pool is
rewritten under generation+1 with the new resourceSliceCount, and surplus slices are deleted.
Deletes come first, so the scheduler never sees two generations' worth of the same devices.

A stored slice of another pool (someone else's, planted on this node and driver) is deleted,
never updated into ours: `spec.pool.name` is immutable, so reusing it fails every publish, and
its generation is not ours to continue.
"""

from collections.abc import Sequence

import attrs

from npu_dra.domain.pool import PoolRef, ResourceSlice


@attrs.frozen
class SyncPlan:
    deletes: tuple[str, ...]
    updates: tuple[ResourceSlice, ...]  # carry the stored name
    creates: tuple[ResourceSlice, ...]  # name None: the API generates one

    @property
    def empty(self) -> bool:
        return not (self.deletes or self.updates or self.creates)


def plan_sync(stored: Sequence[ResourceSlice], desired: Sequence[ResourceSlice]) -> SyncPlan:
    pools = {s.pool.name for s in desired} or {s.pool.name for s in stored}
    foreign = tuple(s.name for s in stored if s.pool.name not in pools and s.name)
    ours = [s for s in stored if s.pool.name in pools]
    ordered = sorted(ours, key=lambda s: (-s.pool.generation, s.name or ""))
    if _same_content(ordered, desired):
        return SyncPlan(foreign, (), ())
    generation = max((s.pool.generation for s in ours), default=0) + 1
    fresh = [_at(s, generation, len(desired)) for s in desired]
    reuse = ordered[: len(fresh)]
    updates = tuple(attrs.evolve(f, name=r.name) for f, r in zip(fresh, reuse, strict=False))
    creates = tuple(fresh[len(reuse) :])
    deletes = foreign + tuple(s.name for s in ordered[len(fresh) :] if s.name)
    return SyncPlan(deletes, updates, creates)


def _same_content(stored: Sequence[ResourceSlice], desired: Sequence[ResourceSlice]) -> bool:
    if len(stored) != len(desired) or len({s.pool.generation for s in stored}) > 1:
        return False
    if any(s.pool.resource_slice_count != len(desired) for s in stored):
        return False
    return sorted(_key(s) for s in stored) == sorted(_key(s) for s in desired)


def _key(s: ResourceSlice) -> str:
    """Order-insensitive within a device's maps: the API server returns them sorted by key."""
    devices = [
        (d.name, sorted(d.attributes.items()), sorted(d.capacity.items()), d.taints)
        for d in s.devices
    ]
    return repr((s.driver, s.node_name, s.pool.name, devices))


def _at(s: ResourceSlice, generation: int, count: int) -> ResourceSlice:
    return attrs.evolve(s, pool=PoolRef(s.pool.name, generation, count))
