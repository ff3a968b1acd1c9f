"""`matchAttribute` as the scheduler's allocator checks it (`matchAttributeConstraint`): the
first device added pins the value, every later one in scope must carry the same value and type;
a device without the attribute never fits. The count of devices in the set is all it tracks.
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
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)

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
