"""The device plugin's static CDI spec as a file: `<vendor>-<class>.json` in the CDI directory.

CDI's static naming (domain/cdi.py's `static_spec_file_name`) deliberately differs from the DRA
store's `..._<claimUID>.json`, so a DRA plugin sharing the directory never mistakes it for a stale
claim's spec. Written like every spec of ours (adapters/atomic.py): temp file, fsync, rename,
directory fsync. Read like a claim's spec (adapters/cdi/files.py): a regular file of at most
MAX_SPEC_BYTES, never through a link, never blocking on a FIFO.
"""

import json
from pathlib import Path

from npu_dra.adapters.atomic import ForeignEntry, atomic_write, read_regular
from npu_dra.adapters.cdi.codec import MAX_SPEC_BYTES, InvalidCdiSpec, decode, encode
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
            data = read_regular(path, limit=MAX_SPEC_BYTES)
            return None if data is None else decode(json.loads(data))
        except ForeignEntry as e:
            raise StateError(f"CDI spec {path}: {e.why}, not a file this plugin wrote") from e
        except (OSError, ValueError, InvalidCdiSpec) as e:
            raise StateError(f"CDI spec {path}: unreadable: {e}") from e
