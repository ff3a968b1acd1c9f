"""CDI specs as files in a runtime-watched directory (`/var/run/cdi`), one per claim.

The directory is shared with other drivers and watched by containerd or CRI-O, so a reader must
never see a half-written spec: files are written the way the Go CDI library writes them, and only
files that follow our transient naming convention are ever read, listed or removed.

The directory is also writable by whoever else can write there, so nothing found in it is trusted
to be ours: a spec is read only if it is a regular file of at most MAX_SPEC_BYTES (never through a
link, never blocking on a FIFO), and any other entry at one of our names (a directory, a FIFO, a
link, a huge file) is reported once and skipped, or replaced by our rename when we write the spec;
it never blocks, bloats or stops the plugin.

Writes and removals are not flushed to disk one by one (the Go library does not flush either):
the checkpoint is the durable record of which specs should exist, it is saved before a prepare
or unprepare is answered, and the plugin's start-up repair rewrites every checkpointed claim's
spec that a power loss damaged or lost and removes every spec the checkpoint does not hold,
before it serves anything. (The directory is usually tmpfs, empty after a reboot.)
"""

import json
import os
from pathlib import Path

from npu_dra.adapters.atomic import (
    ForeignEntries,
    ForeignEntry,
    atomic_write,
    read_regular,
    remove_temp_files,
)
from npu_dra.adapters.cdi.codec import MAX_SPEC_BYTES, InvalidCdiSpec, check_uid, decode, encode
from npu_dra.domain.cdi import (
    CdiSpec,
    claim_of_spec_file,
    claim_spec_file_name,
    claim_spec_prefix,
    class_kind,
)
from npu_dra.domain.errors import InvalidName, StateError
from npu_dra.domain.ids import ClaimUID, DriverName

SPEC_MODE = 0o644
# Temp files start with a dot and our spec names (CDI runtimes ignore them), so a clean-up at
# start removes only ours. Older versions used the Go library's `spec.*.tmp`, which other
# drivers still use in this shared directory: those are removed only once they are stale.
LEGACY_TEMP_PREFIX = "spec."
LEGACY_TEMP_AGE_S = 600.0


class FileCdiStore:
    def __init__(self, root: Path, *, driver: str, cdi_class: str) -> None:
        self._root = root
        # The store's kind names its files (a spec's own kind is not consulted): the claim
        # UID is the transient ID of `<vendor>-<class>_<claimUID>.json`.
        self._kind = class_kind(DriverName(driver), cdi_class)
        self._temp_prefix = f".{claim_spec_prefix(self._kind)}"
        self._foreign = ForeignEntries("CDI directory")

    def write(self, *, uid: ClaimUID, spec: CdiSpec) -> None:
        path = self._path(uid)
        # One line: `indent` would make json use its pure-Python encoder, on every prepare.
        data = json.dumps(encode(spec)).encode() + b"\n"
        # Atomic like the Go writer: a crash leaves the old spec or the new one, never a mix.
        try:
            atomic_write(path, data, mode=SPEC_MODE, temp_prefix=self._temp_prefix, flush=False)
        except OSError as e:
            raise StateError(f"CDI spec {path}: cannot write: {e}") from e
        self._foreign.forget(path)

    def read(self, *, uid: ClaimUID) -> CdiSpec | None:
        """The claim's spec, None if absent; StateError if what is there is not a spec of ours
        (unreadable, damaged, or a foreign entry, which is reported and never read)."""
        path = self._path(uid)
        try:
            data = read_regular(path, limit=MAX_SPEC_BYTES)
            return None if data is None else decode(json.loads(data.decode()))
        except ForeignEntry as e:
            self._foreign.report(e, action="not read")
            raise StateError(f"CDI spec {path}: {e.why}, not a file this plugin wrote") from e
        except (OSError, ValueError) as e:  # JSONDecodeError, UnicodeDecodeError, InvalidCdiSpec
            reason = str(e) if isinstance(e, InvalidCdiSpec) else f"{type(e).__name__}: {e}"
            raise StateError(f"CDI spec {path}: {reason}") from e

    def remove(self, *, uid: ClaimUID) -> None:
        """Unlinks whatever non-directory entry holds the claim's name (never following it); a
        directory there is not a spec of ours: reported and left, the spec counts as absent."""
        path = self._path(uid)
        try:
            path.unlink()
        except FileNotFoundError:
            return
        except IsADirectoryError:
            self._foreign.report(ForeignEntry(path, "a directory"))
            return
        except OSError as e:
            raise StateError(f"CDI spec {path}: cannot remove: {e}") from e
        self._foreign.forget(path)

    def remove_temp_files(self) -> tuple[str, ...]:
        """Temp files of writes a crash interrupted (call at start only); their names."""
        try:
            ours = remove_temp_files(self._root, [self._temp_prefix], foreign=self._foreign)
            legacy = remove_temp_files(
                self._root,
                [LEGACY_TEMP_PREFIX],
                older_than_s=LEGACY_TEMP_AGE_S,
                foreign=self._foreign,
            )
        except OSError as e:
            raise StateError(f"CDI root {self._root}: cannot remove temp files: {e}") from e
        return ours + legacy

    def claim_uids(self) -> frozenset[ClaimUID]:
        """The claims with an entry at their spec's name, directories left out (reported):
        `remove` can take away anything else there without opening it."""
        try:
            entries = list(os.scandir(self._root))
        except FileNotFoundError:
            return frozenset()
        uids: set[ClaimUID] = set()
        for entry in entries:
            uid = claim_of_spec_file(self._kind, entry.name)
            if uid is None or not _is_uid(uid):
                continue
            if entry.is_dir(follow_symlinks=False):
                self._foreign.report(ForeignEntry(self._root / entry.name, "a directory"))
                continue
            uids.add(ClaimUID(uid))
        return frozenset(uids)

    def _path(self, uid: ClaimUID) -> Path:
        return self._root / claim_spec_file_name(self._kind, check_uid(uid))


def _is_uid(text: str) -> bool:
    try:
        check_uid(text)
    except InvalidName:
        return False
    return True
