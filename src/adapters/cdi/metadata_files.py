"""Claims' device metadata files (KEP-5304; domain/device_metadata.py) on the node: one
directory per claim UID, `<plugin dir>/dra-device-metadata/<claimUID>/`, holding
`<request>/<driver>-metadata.json`, mounted read-only into the claim's containers through its CDI
spec. Under the driver's own plugin directory, as the KEP puts them (its path inherits the
kubelet's root dir; the plugin sees it at the same path as the host).

Files are written atomically (a container starting while a repair rewrites one reads the old or
the new file) and readable by all (0644, the KEP's mode: containers run as any user).
"""

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from npu_dra.adapters.atomic import atomic_write
from npu_dra.adapters.cdi.codec import check_uid
from npu_dra.domain.errors import StateError
from npu_dra.domain.ids import ClaimUID

DIRECTORY = "dra-device-metadata"
FILE_MODE = 0o644
MAX_FILES = 64  # a claim has at most 32 requests (resource.k8s.io AllocationResultsMaxSize)
_RELATIVE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[-a-z0-9.]{1,253}\.json\Z")


class FileMetadataFiles:
    def __init__(self, plugin_dir: Path) -> None:
        self._root = plugin_dir / DIRECTORY

    def write_metadata(self, *, uid: ClaimUID, files: Mapping[str, Mapping[str, Any]]) -> str:
        if len(files) > MAX_FILES:
            raise StateError(f"claim {uid}: {len(files)} metadata files, at most {MAX_FILES}")
        directory = self._root / check_uid(uid)
        for relative, document in files.items():
            if not _RELATIVE.match(relative):
                raise StateError(f"claim {uid}: metadata file name {relative[:80]!r} refused")
            data = json.dumps(document, indent=2, sort_keys=True).encode() + b"\n"
            try:
                atomic_write(
                    directory / relative, data, mode=FILE_MODE, temp_prefix=".metadata.",
                    flush=False,
                )  # fmt: skip
            except OSError as error:
                raise StateError(f"cannot write metadata of claim {uid}: {error}") from error
        return str(directory)

    def remove_metadata(self, *, uid: ClaimUID) -> None:
        try:
            shutil.rmtree(self._root / check_uid(uid))
        except FileNotFoundError:
            return
        except OSError as error:
            raise StateError(f"cannot remove metadata of claim {uid}: {error}") from error
