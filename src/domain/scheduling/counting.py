"""How many of a node's devices a request can have, by counting alone: those that match its class
and selectors, those of them free, those with the capacity asked left and with their slice's
shared counters left, against how many it needs. Where fewer are left than needed no search can
find them, and the words say so with the numbers (`simulate --explain`).
"""

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

import attrs

from npu_dra.domain.claims import AllocationMode, CapacityAmounts, DeviceClass, ResourceClaim
from npu_dra.domain.device_tolerations import DeviceToleration, all_tolerated
from npu_dra.domain.ids import DeviceClassName
from npu_dra.domain.scheduling.counters import CounterBook, counter_book
from npu_dra.domain.scheduling.explain_capacity import has_room, no_room
from npu_dra.domain.scheduling.index import ClusterIndex, NodeState
from npu_dra.domain.scheduling.matcher import Matcher
from npu_dra.domain.scheduling.pools import Candidate
from npu_dra.domain.scheduling.request_data import claim_label


@attrs.frozen
class Need:
    """One request (or a firstAvailable request's first alternative) on one node."""

    claim: str  # ns/name
    request: str
    more: str  # " (first of N alternatives)" for a firstAvailable request
    device_class: DeviceClassName
    selectors: tuple[str, ...]
    all_mode: bool
    count: int
    admin: bool
    capacity: CapacityAmounts = ()
    tolerations: tuple[DeviceToleration, ...] = ()

    @property
    def label(self) -> str:
        return f"claim {self.claim}, request {self.request}{self.more}"


@attrs.frozen
class Count:
    """A request counted on a node: the free devices it matches, and the words where the node
    fails it (a CEL error, or too few devices left)."""

    free: list[Candidate]
    reason: str | None = None  # the node fails the request: a selector's error, or the count
    error: bool = False  # the reason is a selector's error, not a count
    words: str = ""  # the count, whether or not it fails the request
    # counting alone proves the node cannot hold the request (an `All` request that matches
    # nothing is the search's to decide)
    rules_out: bool = False


def ruled_out(
    state: NodeState,
    claims: Sequence[ResourceClaim],
    index: ClusterIndex,
    classes: Mapping[DeviceClassName, DeviceClass],
    matcher: Matcher,
    *,
    taints: bool = False,
) -> bool:
    """Whether some request of the claims has fewer devices left on the node than it needs, so
    that no search can allocate them there (a firstAvailable request's other alternatives may
    fit: it is left to the search)."""
    book = counter_book(state.pools, index.allocated)
    for need in needs(claims):
        device_class = classes.get(need.device_class)
        if need.more or device_class is None:
            continue
        counted = count(need, device_class, state, index, matcher=matcher, book=book, taints=taints)
        if counted.rules_out:
            return True
    return False


def needs(claims: Sequence[ResourceClaim]) -> Iterator[Need]:
    for claim in claims:
        if claim.allocation is not None:
            continue
        for r in claim.spec.requests:
            first = r.first_available[0] if r.first_available else r
            more = f" (first of {len(r.first_available)} alternatives)" if r.first_available else ""
            yield Need(
                claim_label(claim),
                r.name,
                more,
                first.device_class_name,
                first.selectors,
                first.allocation_mode is AllocationMode.ALL,
                first.count,
                r.admin_access,
                first.capacity,
                first.tolerations,
            )


def count(
    need: Need,
    device_class: DeviceClass,
    state: NodeState,
    index: ClusterIndex,
    *,
    matcher: Matcher,
    book: CounterBook,
    taints: bool = False,
) -> Count:
    """The request's devices on the node, counted; with `taints` (DRADeviceTaints) a device
    whose taints the request does not all tolerate is counted apart."""
    matching, error = _matching(state.devices, need, device_class, matcher)
    if error is not None:
        return Count([], f"{need.label}: {error}", error=True)
    if need.all_mode:  # an `All` request asks only the devices with room (request_data.py)
        matching = [c for c in matching if has_room(c, need.capacity, index)]
    free = [c for c in matching if need.admin or c.key not in index.allocated]
    tolerated, room = _tolerated(free, need.tolerations) if taints else (free, "")
    roomy = [c for c in tolerated if has_room(c, need.capacity, index)]
    room += "" if roomy == tolerated else f", {len(roomy)} with the capacity asked left"
    if tolerated and not roomy:
        room += f" ({no_room(tolerated[0], need.capacity, index)})"
    usable = [c for c in roomy if _counted_in(book, c)]
    words, short = _words(need, matching, free, usable, (len(roomy), room))
    conclusive = short and (bool(matching) or not need.all_mode)
    return Count(free, words if short else None, words=words, rules_out=conclusive)


def _tolerated(
    free: list[Candidate], tolerations: tuple[DeviceToleration, ...]
) -> tuple[list[Candidate], str]:
    """The free devices whose taints the request tolerates, and the words for the others, by
    their first untolerated taint (as the allocator skips them: candidates.py)."""
    kept, refused = [], Counter[str]()
    for candidate in free:
        untolerated = [t for t in candidate.device.taints if not all_tolerated((t,), tolerations)]
        if untolerated:
            t = untolerated[0]
            refused[
                f"{t.key}={t.value}:{t.effect.value}" if t.value else f"{t.key}:{t.effect.value}"
            ] += 1
        else:
            kept.append(candidate)
    if not refused:
        return kept, ""
    shown = ", ".join(f"{taint}: {n}" for taint, n in sorted(refused.items()))
    return (
        kept,
        f", {len(free) - len(kept)} of those with a taint the request does not tolerate ({shown})",
    )


def _matching(
    devices: Sequence[Candidate], need: Need, device_class: DeviceClass, matcher: Matcher
) -> tuple[list[Candidate], str | None]:
    """The node's devices both selector lists accept, or the first CEL error, named."""
    matching = []
    lists = (
        (f"class {device_class.name}", device_class.selectors),
        ("the request", need.selectors),
    )
    for candidate in devices:
        accepted = True
        for owner, expression in ((o, e) for o, selectors in lists for e in selectors):
            outcome = matcher.outcome(expression, candidate)
            if isinstance(outcome, str):
                return [], (
                    f"selector {expression!r} of {owner} fails on device "
                    f"{'/'.join(candidate.key)}: {outcome}"
                )
            if not outcome:  # as the scheduler: the first selector that refuses ends the checks
                accepted = False
                break
        if accepted:
            matching.append(candidate)
    return matching, None


def _counted_in(book: CounterBook, candidate: Candidate) -> bool:
    """Whether the device's slice still has the shared counters it consumes (vNPUs of a chip
    whose whole device, or other vNPUs, hold them have none)."""
    if not candidate.device.consumes_counters:
        return True
    if not book.take(candidate):
        return False
    book.give_back(candidate)
    return True


def _words(
    need: Need,
    matching: list[Candidate],
    free: list[Candidate],
    usable: list[Candidate],
    room: tuple[int, str],  # how many free devices have the capacity asked left, and the words
) -> tuple[str, bool]:
    """The count in words, and whether too few devices are left."""
    chosen = f"class {need.device_class}" + (
        " and the request's selectors" if need.selectors else ""
    )
    if not matching:
        return f"{need.label}: no device on the node matches {chosen}", True
    needed = len(matching) if need.all_mode else need.count
    mode = " (allocationMode All: every matching device)" if need.all_mode else ""
    counted = (
        f" ({len(usable)} with their slice's shared counters left)" if len(usable) < room[0] else ""
    )
    words = (
        f"{need.label}: {len(matching)} device(s) match {chosen}, {len(free)} of them free"
        f"{room[1]}{counted}, {needed} needed{mode}"
    )
    return words, len(usable) < needed
