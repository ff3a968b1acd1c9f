"""A node's view of the published pools, gathered as kube-scheduler's allocator does
(`GatherPools`, k8s.io/dynamic-resource-allocation/structured v0.34.3, incubating variant).

Per (driver, pool) only the slices of the newest generation count; a pool is incomplete while
it has fewer slices than `resourceSliceCount`, and invalid when a device name repeats. The
scheduler walks pools in Go map order (random) and a pool's slices in informer order (also
random); here pools go by (driver, pool name) and slices by name. That matters only where a node
has more than one slice: `walk_orders` gives the other orders the scheduler may walk, so that a
caller can tell a certain choice of devices from one that depends on the order.
"""

import itertools
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction

import attrs

from npu_dra.domain.ids import DeviceName, DriverName, PoolName
from npu_dra.domain.pool import PublishedDevice, ResourceSlice

DeviceKey = tuple[DriverName, PoolName, DeviceName]


@attrs.frozen
class Candidate:
    driver: DriverName
    pool: PoolName
    device: PublishedDevice
    key: DeviceKey
    slice: str = ""  # its ResourceSlice's name
    # whose sharedCounters it consumes: its own slice's (1.34), or the pool's where counter sets
    # are published in slices of their own (1.35+); "" means its slice
    counter_scope: str = ""

    @property
    def counters_in(self) -> str:
        return self.counter_scope or self.slice


@attrs.frozen
class Pool:
    driver: DriverName
    name: PoolName
    devices: tuple[Candidate, ...]  # in slice order
    incomplete: bool = False
    invalid: str | None = None
    # counter scope (slice name, or the pool's label) -> counter set -> counter -> value
    counters: Mapping[str, Mapping[str, Mapping[str, Fraction]]] = attrs.field(factory=dict)

    @property
    def label(self) -> str:
        return f"{self.driver}/{self.name}"


def gather_pools(slices: Iterable[ResourceSlice]) -> tuple[Pool, ...]:
    newest: dict[tuple[DriverName, PoolName], list[ResourceSlice]] = {}
    for s in sorted(slices, key=lambda s: s.name or ""):
        key = (s.driver, s.pool.name)
        kept = newest.setdefault(key, [])
        if kept and s.pool.generation < kept[0].pool.generation:
            continue
        if kept and s.pool.generation > kept[0].pool.generation:
            kept.clear()
        kept.append(s)
    return tuple(_pool(driver, name, kept) for (driver, name), kept in sorted(newest.items()))


def _pool(driver: DriverName, name: PoolName, slices: list[ResourceSlice]) -> Pool:
    """Counters per slice (1.34); per pool when a slice holds counter sets and no devices, the
    layout the 1.35+ API server wants (v0.36.3 pools_incubating.go: `getAndValidateCounterSets`
    gathers the counter sets of all the pool's slices)."""
    apart = any(s.shared_counters and not s.devices for s in slices)
    scope = f"{driver}/{name}" if apart else ""
    devices = tuple(
        Candidate(driver, name, d, (driver, name, d.name), s.name or "", scope)
        for s in slices
        for d in s.devices
    )
    counters = {
        scope or s.name or "": {
            c.name: {k: q.value for k, q in c.counters.items()} for c in s.shared_counters
        }
        for s in slices
        if s.shared_counters
    }
    if apart:
        counters = {scope: {k: v for sets in counters.values() for k, v in sets.items()}}
    seen: set[DeviceName] = set()
    invalid = None
    for c in devices:
        if c.device.name in seen:
            invalid = f"duplicate device name {c.device.name}"
            break
        seen.add(c.device.name)
    incomplete = len(slices) != slices[0].pool.resource_slice_count
    return Pool(driver, name, devices, incomplete, invalid, counters)


MAX_WALK_ORDERS = 24


def walk_orders(pools: tuple[Pool, ...]) -> Iterator[tuple[Pool, ...]]:
    """Every order of pools, and of slices within each pool, other than the given one, as long
    as there are at most MAX_WALK_ORDERS of them; else only the fully reversed order. The count
    is known before any order is built: a node with one slice per chip has n! of them."""
    slices = [_slices(p) for p in pools]
    count = _order_count([len(pools), *(len(s) for s in slices)], MAX_WALK_ORDERS + 1)
    if count <= 1:
        return
    if count > MAX_WALK_ORDERS:
        yield tuple(
            _reordered(p, s[::-1]) for p, s in reversed(list(zip(pools, slices, strict=True)))
        )
        return
    per_pool = [list(itertools.permutations(s)) for s in slices]
    first = True
    for pool_order in itertools.permutations(range(len(pools))):
        for slice_orders in itertools.product(*(per_pool[i] for i in pool_order)):
            if first:  # the given order itself
                first = False
                continue
            yield tuple(
                _reordered(pools[i], order)
                for i, order in zip(pool_order, slice_orders, strict=True)
            )


def _order_count(sizes: Iterable[int], cap: int) -> int:
    """The product of the sizes' factorials, or `cap` as soon as it reaches `cap`."""
    count = 1
    for size in sizes:
        for factor in range(2, size + 1):
            count *= factor
            if count >= cap:
                return cap
    return count


def _slices(pool: Pool) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c.slice for c in pool.devices))


def _reordered(pool: Pool, slices: tuple[str, ...]) -> Pool:
    rank = {name: i for i, name in enumerate(slices)}
    devices = sorted(pool.devices, key=lambda c: rank[c.slice])  # stable: a slice keeps its order
    return attrs.evolve(pool, devices=tuple(devices))
