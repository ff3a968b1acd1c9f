"""`matchAttribute` as the scheduler's allocator checks it (`matchAttributeConstraint`): the
first device added pins the value, every later one in scope must carry the same value and type;
a device without the attribute never fits. The count of devices in the set is all it tracks.
`distinctAttribute` as v1.34.3 checks it: see DistinctAttribute; as v1.36.3 does: see
DistinctValues.
"""

import attrs

from npu_dra.domain.attributes import AttributeValue
from npu_dra.domain.scheduling.pools import Candidate

Pinned = tuple[type, AttributeValue]  # the type too: True and 1 are different attribute values


def lookup_attribute(candidate: Candidate, name: str) -> Pinned | None:
    """The fully qualified name first, then the bare identifier when the domain is the driver's."""
    attributes = candidate.device.attributes
    value = attributes.get(name)
    if value is None:
        domain, _, identifier = name.partition("/")
        if domain == candidate.driver:
            value = attributes.get(identifier)
    return None if value is None else (type(value), value)


@attrs.define
class MatchAttribute:
    attribute: str
    requests: frozenset[str]
    pinned: Pinned | None = None
    count: int = 0

    def applies(self, base: str, sub: str) -> bool:
        return _in_scope(self.requests, base, sub)

    def add(self, base: str, sub: str, candidate: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        value = lookup_attribute(candidate, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.pinned = value
        elif value != self.pinned:
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if self.applies(base, sub):
            self.count -= 1


@attrs.frozen
class DistinctAttribute:
    """`distinctConstraint` of the allocator v1.34.3 runs with its default gates (the
    experimental variant: DRAResourceClaimDeviceStatus is on, which the incubating one lacks),
    even with DRAConsumableCapacity off: a device in scope without the attribute never fits, but
    values are compared by pointer (`attribute.IntValue == attr.IntValue`, constraint.go), so
    two devices never clash and repeated values pass. Only where `matchAttribute` is unset: the
    allocator takes `matchAttribute` first."""

    attribute: str
    requests: frozenset[str]

    def add(self, base: str, sub: str, candidate: Candidate) -> bool:
        if not _in_scope(self.requests, base, sub):
            return True
        return lookup_attribute(candidate, self.attribute) is not None

    def remove(self, base: str, sub: str) -> None:
        """Nothing to forget: only the attribute's presence is checked."""


@attrs.define
class DistinctValues:
    """`distinctAttributeConstraint` of v1.36.3 (structured/internal/incubating/constraint.go
    v0.36.3): values are compared, same type and value clash. Kept as upstream keeps it: one
    value per request name (a request's later device replaces its earlier one, so only the
    newest is compared), and `remove` forgets the request's value while the count stays, so
    after a backtrack within a request the next device is compared with the other requests'."""

    attribute: str
    requests: frozenset[str]
    values: dict[str, Pinned] = attrs.Factory(dict)
    count: int = 0

    def add(self, base: str, sub: str, candidate: Candidate) -> bool:
        if not _in_scope(self.requests, base, sub):
            return True
        value = lookup_attribute(candidate, self.attribute)
        if value is None:
            return False
        if self.count and value in self.values.values():
            return False
        self.values[base] = value
        self.count += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if _in_scope(self.requests, base, sub):
            self.values.pop(base, None)
            self.count -= 1


def _in_scope(requests: frozenset[str], base: str, sub: str) -> bool:
    if not requests:
        return True
    return base in requests or (bool(sub) and f"{base}/{sub}" in requests)
