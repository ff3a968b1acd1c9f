"""CancelMarks: unprepares one plugin instance tells the other, so that a prepare still waiting
on the API server in one instance is cancelled by an unprepare the kubelet sent to the other.

During a seamless upgrade (app/services/instance_state_lock.py) a prepare reads its claims outside
the lock the
instances share; if the kubelet gives up on it and sends the unprepare to the other instance, that
one finds nothing to undo. Each unprepare therefore leaves a mark here, a file per claim UID in
`<data dir>/unprepared/` holding when it ran (CLOCK_MONOTONIC: one clock for every process on the
node), and a prepare commits nothing for a claim marked after it began (app/services/inflight.py).
Both happen under the shared lock, so either the mark comes first and the prepare sees it, or the
prepare's record does and the unprepare removes it.

Marks older than KEEP_S (far past the kubelet's 45 s deadline for a prepare) are removed when a
new one is made; a file name is the UID's SHA-256, whatever the UID holds. A mark that cannot be
written is logged: the unprepare itself still answers, as it would with one instance.
"""

import hashlib
import logging
import os
from pathlib import Path

from npu_dra.adapters.atomic import atomic_write, read_regular
from npu_dra.domain.ids import ClaimUID

log = logging.getLogger(__name__)

KEEP_S = 600.0
MAX_MARKS = 10_000  # looked at when pruning: a node unprepares far fewer claims in KEEP_S
MARK_BYTES = 64
PRUNE_EVERY_S = 60.0
DIR_MODE = 0o700
FILE_MODE = 0o600


class CancelMarks:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._pruned: float | None = None  # when marks were last pruned

    def mark(self, *, uid: ClaimUID, at: float) -> None:
        try:
            self._prune(at)
            data = f"{at!r}\n".encode()
            atomic_write(
                self._path(uid), data, mode=FILE_MODE, temp_prefix=".mark.", dir_mode=DIR_MODE,
                flush=False,
            )  # fmt: skip
        except OSError as error:
            log.warning("cannot tell another instance that claim %s was unprepared: %s", uid, error)

    def marked_since(self, *, uid: ClaimUID, at: float) -> bool:
        """Whether an unprepare of `uid` ran after `at` (an unreadable mark counts as one)."""
        try:
            data = read_regular(self._path(uid), limit=MARK_BYTES)
        except OSError as error:
            log.warning("claim %s: its unprepare mark cannot be read (%s): cancelled", uid, error)
            return True
        if data is None:
            return False
        try:
            return float(data.decode("ascii").strip()) > at
        except (UnicodeDecodeError, ValueError):
            return True

    def _path(self, uid: ClaimUID) -> Path:
        return self.directory / hashlib.sha256(uid.encode(errors="replace")).hexdigest()

    def _prune(self, now: float) -> None:
        """Remove marks older than KEEP_S; at most once every PRUNE_EVERY_S."""
        if self._pruned is not None and now - self._pruned < PRUNE_EVERY_S:
            return
        self._pruned = now
        try:
            names = os.listdir(self.directory)[:MAX_MARKS]
        except FileNotFoundError:
            return
        for name in names:
            path = self.directory / name
            try:
                data = read_regular(path, limit=MARK_BYTES)
                stale = data is None or float(data.decode("ascii").strip()) < now - KEEP_S
            except (OSError, UnicodeDecodeError, ValueError):
                stale = True
            if stale:
                path.unlink(missing_ok=True)
