"""CheckpointStore adapters: a JSON file replaced atomically, and an in-memory twin."""

from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore

__all__ = ["FileCheckpointStore", "MemoryCheckpointStore"]
