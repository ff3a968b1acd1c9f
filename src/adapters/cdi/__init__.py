"""CdiStore adapters: spec files in the runtime's CDI directory, and an in-memory twin."""

from npu_dra.adapters.cdi.files import FileCdiStore
from npu_dra.adapters.cdi.memory import MemoryCdiStore

__all__ = ["FileCdiStore", "MemoryCdiStore"]
