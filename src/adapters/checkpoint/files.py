"""The checkpoint as files under the plugin's data directory: a snapshot and a journal.

These files are the only memory of what was prepared (an unprepare may come after a restart and
after the claim is gone); a damaged one is reported, never mistaken for "nothing prepared".

- `checkpoint.json`: a whole checkpoint (the codec's checksummed document), replaced atomically.
- `checkpoint.json.journal`: what changed since, one line per save: the claims added or changed
  (a checksummed document of the same codec) and the UIDs removed. A save appends its line and
  flushes it with one fdatasync, where replacing the snapshot costs two and rewrites every claim.

Loading reads the snapshot and applies the journal's lines in order. A crash during an append
leaves at most the last line incomplete or damaged: that save never returned, so the line is
ignored (and cut off before the next append). A damaged line before the last is damage.

Every `COMPACT_AFTER` lines (or `COMPACT_AFTER_BYTES`) the journal is folded into the snapshot:
the snapshot is replaced by what is saved now (snapshot + journal), then the journal is emptied,
then the new change is appended. A crash between the first two steps leaves the journal's lines
over a snapshot that already holds their effect; applying them again changes nothing (each line
sets claims to the values they have, or removes claims that are gone), so the order is safe.

Versions (codec.py): state an older version wrote (any document of it with claims) is read
as it is and rewritten only by the first save, as a compaction before that save's line, so an
older instance still running beside this one (a surge upgrade) reads the files until this one
first changes them. Once a save leaves no claims, the files are compacted DRAIN_AFTER_S later
(on a timer thread that the process waits for at exit) into the drained form: a snapshot with
no claims, written as version 1, and an empty journal, which any release reads; a save within
that time appends as usual, so a node whose last claim goes and comes pays no snapshot write.
On the drained form, the next save that adds a claim makes it the snapshot (in this version)
instead of appending it. So whenever claims are held, the snapshot is of this version: an older
release refuses the files rather than ignore a newer journal line as one a crash cut short.
A whole journal line of a newer version is refused here too.

Nothing at these names is written through or trusted to be ours (file_io.py, which reads and
writes them): any other entry at either name (a link, a FIFO, a directory) is reported and read
as absent, and the next save replaces it by a rename. The journal is appended to only when it is
a regular file with no other name; otherwise the save compacts first, as above (the new, empty
journal is renamed over the entry).
"""

import contextlib
import json
import logging
import threading
from contextlib import AbstractContextManager
from pathlib import Path

import attrs

from npu_dra.adapters.atomic import ForeignEntries, ForeignEntry, identity, remove_temp_files
from npu_dra.adapters.checkpoint.codec import decode, encode, journal_line
from npu_dra.adapters.checkpoint.file_io import append_line, read_file, replace_file
from npu_dra.adapters.checkpoint.journal import replay
from npu_dra.adapters.checkpoint.limits import (
    COMPACT_AFTER,
    COMPACT_AFTER_BYTES,
    DRAIN_AFTER_S,
    MAX_CHECKPOINT_BYTES,
    MAX_JOURNAL_BYTES,
)
from npu_dra.domain.checkpoint import CHECKPOINT_VERSION, Checkpoint
from npu_dra.domain.errors import StateError

JOURNAL_SUFFIX = ".journal"
log = logging.getLogger(__name__)


class FileCheckpointStore:
    def __init__(
        self,
        path: Path,
        *,
        drain_after_s: float = DRAIN_AFTER_S,
        drain_guard: AbstractContextManager[object] | None = None,
    ) -> None:
        self.path, self._drain_after = path, drain_after_s
        # The plugin's instance lock, held while draining, so that a save another instance made
        # meanwhile (a seamless upgrade) is read before the files are rewritten. Only the plugin
        # gives one; with it, a load that finds files a crash left undrained drains them too.
        self._drain_guard, self._owned = drain_guard or contextlib.nullcontext(), bool(drain_guard)
        self.journal = path.with_name(path.name + JOURNAL_SUFFIX)
        self._temp_prefix = f".{path.name}."
        self._saved: Checkpoint | None = None  # what the files hold, once this store knows
        self._lines = 0  # complete lines in the journal
        self._good_size = 0  # bytes of the journal up to its last complete, valid line
        self._torn = False  # the journal ends in a line a crash cut (cut it before appending)
        self._journaled = False  # the journal file exists
        self._older: int | None = None  # the files hold claims in this older version
        self._drained = False  # the files are the drained form (no claims, version 1)
        self._timer: threading.Timer | None = None  # the drain to come
        self._seen: tuple[tuple[int, ...], ...] | None = None  # identity() as last read
        self._lock = threading.Lock()  # saves from several threads are written one at a time
        self._foreign = ForeignEntries("checkpoint directory")

    def remove_temp_files(self) -> tuple[str, ...]:
        """Temp files of saves a crash interrupted (call at start only); their names."""
        try:
            return remove_temp_files(self.path.parent, [self._temp_prefix], foreign=self._foreign)
        except OSError as e:
            raise StateError(f"checkpoint {self.path}: cannot remove temp files: {e}") from e

    def load(self) -> Checkpoint:
        """What the files hold; not read again while they are as this store last left them
        (another plugin instance's save changes them: the preparer loads at every state step
        where one may serve beside this one, app/services/instance_state_lock.py)."""
        with self._lock:
            seen = identity(self.path, self.journal)
            if self._saved is not None and seen is not None and seen == self._seen:
                return attrs.evolve(self._saved, claims=dict(self._saved.claims))  # a copy
            checkpoint = self._load()
            self._seen = seen
            return checkpoint

    def save(self, *, checkpoint: Checkpoint) -> None:
        with self._lock:
            self._seen = None
            self._save(checkpoint)
            self._seen = identity(self.path, self.journal)

    def _load(self) -> Checkpoint:
        self._older = None
        checkpoint = self._load_snapshot()
        data = read_file(self.journal, "checkpoint journal", MAX_JOURNAL_BYTES, self._foreign)
        self._journaled = data is not None
        self._drained = not checkpoint.claims and not data
        checkpoint = self._replay(checkpoint, data or b"")
        self._saved = checkpoint
        if self._owned and not checkpoint.claims and not self._drained:
            self._drain_later()
        return checkpoint

    def _save(self, checkpoint: Checkpoint) -> None:
        if self._saved is None:
            self._load()
        before = self._saved
        assert before is not None
        put = {uid: c for uid, c in checkpoint.claims.items() if before.claims.get(uid) != c}
        removed = sorted(uid for uid in before.claims if uid not in checkpoint.claims)
        if not put and not removed and checkpoint.version == before.version:
            return
        try:
            self._write(before, checkpoint, journal_line(Checkpoint(claims=put), removed))
        except OSError as e:
            self._saved = None  # unknown what reached the disk: read it again before the next
            raise StateError(f"checkpoint {self.journal}: cannot write: {e}") from e
        self._saved = checkpoint

    def _write(self, before: Checkpoint, checkpoint: Checkpoint, line: bytes) -> None:
        """Bring the files from `before` (what they hold) to `checkpoint`; `line` the change."""
        folds = self._lines >= COMPACT_AFTER or self._good_size >= COMPACT_AFTER_BYTES
        if self._journaled and (folds or self._older):
            self._compact(before)
        if not self._journaled or self._drained:
            # The first save, or the first claim on the drained form: the snapshot (in this
            # version; see the module's note on the order).
            self._compact(checkpoint)
            return
        self._append(line, before)
        if not checkpoint.claims:
            self._drain_later()

    def _drain_later(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(self._drain_after, self._drain)
        self._timer.name = "checkpoint-drain"
        self._timer.start()  # not a daemon: a process ending meanwhile waits for it

    def _drain(self) -> None:
        """The drained form, if the files (read again: another instance may have saved since)
        still hold no claims: what any release reads."""
        try:
            with self._drain_guard, self._lock:
                saved = self._load()
                if not saved.claims and not self._drained and self._journaled:
                    self._compact(saved)
        except (OSError, StateError) as e:
            with self._lock:
                self._saved = None  # read again before the next save
            log.warning("checkpoint %s: not compacted for a drained node: %s", self.path, e)

    def _note_version(self, read: Checkpoint) -> None:
        if read.claims and read.version < CHECKPOINT_VERSION:
            self._older = min(read.version, self._older or read.version)

    def _load_snapshot(self) -> Checkpoint:
        data = read_file(self.path, "checkpoint", MAX_CHECKPOINT_BYTES, self._foreign)
        if data is None:
            return Checkpoint()
        try:
            checkpoint = decode(json.loads(data))
        except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, CheckpointFormatError
            raise StateError(f"checkpoint {self.path}: {e}") from e
        self._note_version(checkpoint)
        return checkpoint

    def _replay(self, checkpoint: Checkpoint, data: bytes) -> Checkpoint:
        replayed = replay(checkpoint, data, self.journal)
        self._lines, self._good_size, self._torn = replayed.lines, replayed.good_size, replayed.torn
        if replayed.older is not None:
            self._older = min(replayed.older, self._older or replayed.older)
        return replayed.checkpoint

    def _compact(self, saved: Checkpoint) -> None:
        """Make `saved` the snapshot, then empty the journal: `saved` must be what the files
        hold already (or there must be no journal), see the module's note on the order."""
        document = json.dumps(encode(saved), indent=2, sort_keys=True).encode() + b"\n"
        replace_file(self.path, document, self._temp_prefix)
        # Emptied by a rename, like the snapshot: whatever holds the name is replaced, not opened.
        replace_file(self.journal, b"", self._temp_prefix)
        self._lines, self._good_size, self._torn, self._journaled = 0, 0, False, True
        self._drained = not saved.claims
        if self._older is not None and saved.claims:
            log.info(
                "checkpoint %s: migrated %d claims from version %d to %d",
                self.path, len(saved.claims), self._older, CHECKPOINT_VERSION,
            )  # fmt: skip
        self._older = None
        self._foreign.forget(self.path)
        self._foreign.forget(self.journal)

    def _append(self, line: bytes, saved: Checkpoint) -> None:
        """Append `line` to the journal; `saved` is what the files hold before it (what a
        compaction makes the snapshot if the journal's name holds something not ours)."""
        try:
            append_line(self.journal, line, offset=self._good_size, cut=self._torn)
        except ForeignEntry as e:
            self._foreign.report(e, action="replaced by a new snapshot and journal")
            self._compact(saved)  # an empty journal: nothing to cut
            append_line(self.journal, line, offset=self._good_size, cut=self._torn)
        self._torn = False
        self._lines += 1
        self._good_size += len(line)
        self._drained = False
