"""The device plugin's static CDI spec as a file: `<vendor>-<class>.json` in the CDI directory.

CDI's static naming (domain/cdi.py's `static_spec_file_name`) deliberately differs from the DRA
store's `..._<claimUID>.json`, so a DRA plugin sharing the directory never mistakes it for a stale
claim's spec. Written like every spec of ours (adapters/atomic.py): temp file, fsync, rename,
directory fsync.
"""

import json
from pathlib import Path

from npu_dra.adapters.atomic import atomic_write
from npu_dra.adapters.cdi.codec import InvalidCdiSpec, decode, encode
from npu_dra.domain.cdi import CdiSpec, static_spec_file_name
from npu_dra.domain.errors import StateError

SPEC_MODE = 0o644
TEMP_PREFIX = ".static-spec."


class FileStaticCdiSpecs:
    def __init__(self, root: Path) -> None:
        self._root = root

    def write_static(self, *, spec: CdiSpec) -> str:
        path = self._root / static_spec_file_name(spec.kind)
        data = json.dumps(encode(spec), indent=2).encode() + b"\n"
        try:
            atomic_write(path, data, mode=SPEC_MODE, temp_prefix=TEMP_PREFIX)
        except OSError as e:
            raise StateError(f"CDI spec {path}: cannot write: {e}") from e
        return str(path)

    def read_static(self, *, kind: str) -> CdiSpec | None:
        path = self._root / static_spec_file_name(kind)
        try:
            return decode(json.loads(path.read_bytes()))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, InvalidCdiSpec) as e:
            raise StateError(f"CDI spec {path}: unreadable: {e}") from e
