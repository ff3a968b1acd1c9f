"""The checkpoint as one JSON file under the plugin's data directory.

NodeUnprepareResources may arrive after a restart and after the claim is gone from the API, so
this file is the only memory of what was prepared: it is replaced atomically and a damaged one is
reported, never mistaken for "nothing prepared".
"""

import json
from pathlib import Path

from npu_dra.adapters.atomic import atomic_write, remove_temp_files
from npu_dra.adapters.checkpoint.codec import decode, encode
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.errors import StateError

CHECKPOINT_MODE = 0o600
DIR_MODE = 0o700  # the plugin's data dir: the checkpoint and the DRA socket, root only


class FileCheckpointStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._temp_prefix = f".{path.name}."

    def remove_temp_files(self) -> tuple[str, ...]:
        """Temp files of saves a crash interrupted (call at start only); their names."""
        try:
            return remove_temp_files(self.path.parent, [self._temp_prefix])
        except OSError as e:
            raise StateError(f"checkpoint {self.path}: cannot remove temp files: {e}") from e

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
        # A crash at any point leaves the previous checkpoint or the new one, whole.
        try:
            atomic_write(
                self.path,
                data,
                mode=CHECKPOINT_MODE,
                temp_prefix=self._temp_prefix,
                dir_mode=DIR_MODE,
            )
        except OSError as e:
            raise StateError(f"checkpoint {self.path}: cannot write: {e}") from e
