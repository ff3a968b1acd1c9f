"""An in-memory CheckpointStore for tests and the offline simulation.

It holds the encoded document and decodes on load, so it rejects and returns exactly what the
file store does, and a caller mutating a loaded checkpoint's mapping cannot change what is stored.
"""

from typing import Any

from npu_dra.adapters.checkpoint.codec import decode, encode
from npu_dra.domain.checkpoint import Checkpoint


class MemoryCheckpointStore:
    def __init__(self) -> None:
        self.document: dict[str, Any] | None = None

    def load(self) -> Checkpoint:
        return Checkpoint() if self.document is None else decode(self.document)

    def save(self, *, checkpoint: Checkpoint) -> None:
        self.document = encode(checkpoint)
