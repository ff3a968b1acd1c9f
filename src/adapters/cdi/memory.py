"""An in-memory CdiStore for tests and the offline simulation.

It keeps the encoded JSON documents and decodes on read, so it accepts, rejects and returns
exactly what the file store does, and nothing a caller holds can change what is stored.
"""

from npu_dra.adapters.cdi.codec import Json, check_uid, decode, encode
from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.ids import ClaimUID


class MemoryCdiStore:
    def __init__(self) -> None:
        self.documents: dict[ClaimUID, Json] = {}

    def write(self, *, uid: ClaimUID, spec: CdiSpec) -> None:
        self.documents[check_uid(uid)] = encode(spec)

    def read(self, *, uid: ClaimUID) -> CdiSpec | None:
        document = self.documents.get(check_uid(uid))
        return None if document is None else decode(document)

    def remove(self, *, uid: ClaimUID) -> None:
        self.documents.pop(check_uid(uid), None)

    def claim_uids(self) -> frozenset[ClaimUID]:
        return frozenset(self.documents)


class MemoryStaticCdiSpecs:
    """The static spec per kind, kept encoded like MemoryCdiStore's documents."""

    def __init__(self) -> None:
        self.documents: dict[str, Json] = {}

    def write_static(self, *, spec: CdiSpec) -> str:
        self.documents[spec.kind] = encode(spec)
        return f"memory:{spec.kind}"

    def read_static(self, *, kind: str) -> CdiSpec | None:
        document = self.documents.get(kind)
        return None if document is None else decode(document)
