"""The checkpoint as one JSON file under the plugin's data directory.

NodeUnprepareResources may arrive after a restart and after the claim is gone from the API, so
this file is the only memory of what was prepared: it is replaced atomically and a damaged one is
reported, never mistaken for "nothing prepared".
"""

import json
import os
import tempfile
from pathlib import Path

from npu_dra.adapters.checkpoint.codec import decode, encode
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.errors import StateError

CHECKPOINT_MODE = 0o600


class FileCheckpointStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Checkpoint:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return Checkpoint()
        except OSError as e:
            raise StateError(f"checkpoint {self.path}: {e}") from e
        try:
            return decode(json.loads(data))
        except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, CheckpointFormatError
            raise StateError(f"checkpoint {self.path}: {e}") from e

    def save(self, *, checkpoint: Checkpoint) -> None:
        data = json.dumps(encode(checkpoint), indent=2, sort_keys=True).encode() + b"\n"
        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True)
        # Temp file in the same directory, fsync, rename over the target, fsync the directory:
        # a crash at any point leaves the previous checkpoint or the new one, whole.
        fd, temp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fchmod(out.fileno(), CHECKPOINT_MODE)
                os.fsync(out.fileno())
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
