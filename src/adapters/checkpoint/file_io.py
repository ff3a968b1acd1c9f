"""The checkpoint's file operations (adapters/checkpoint/files.py decides when each is done):
reading a file at one of its names, replacing one by a rename, and appending a journal line.

Nothing at these names is written through or trusted to be ours (adapters/atomic.py): both are
read only as regular files, never through a link, never blocking, up to their size limits (a
larger file is refused, like a damaged one); any other entry at either name (a link, a FIFO, a
directory) is not ours: it is reported and read as absent. The journal is appended to only when
it is a regular file with no other name (otherwise opening it raises ForeignEntry).
"""

import os
from pathlib import Path

from npu_dra.adapters.atomic import (
    ForeignEntries,
    ForeignEntry,
    Oversized,
    atomic_write,
    ensure_dir,
    open_regular_for_append,
    read_regular,
)
from npu_dra.domain.errors import StateError

CHECKPOINT_MODE = 0o600
DIR_MODE = 0o700  # the plugin's data dir: the checkpoint and the DRA socket, root only


def read_file(path: Path, what: str, limit: int, foreign: ForeignEntries) -> bytes | None:
    """The file's bytes; None if absent or not ours (a link, FIFO, directory: reported)."""
    try:
        return read_regular(path, limit=limit)
    except Oversized as e:  # perhaps ours: refused like a damaged one, never taken as empty
        raise StateError(f"{what} {path}: {e.why}; nothing was read") from e
    except ForeignEntry as e:
        foreign.report(e, action="read as absent; the next save replaces it")
        return None
    except OSError as e:
        raise StateError(f"{what} {path}: {e}") from e


def replace_file(path: Path, data: bytes, temp_prefix: str) -> None:
    """`path` holds `data`, by a rename: whatever held the name is replaced, not opened."""
    atomic_write(path, data, mode=CHECKPOINT_MODE, temp_prefix=temp_prefix, dir_mode=DIR_MODE)


def append_line(journal: Path, line: bytes, *, offset: int, cut: bool) -> None:
    """Write `line` at `offset` (the end of the journal's last whole, valid line) and flush it;
    `cut`: first cut off what follows `offset` (a line a crash left), so that ours follows a
    whole one. ForeignEntry, before anything is written, if the journal's name is not ours."""
    fd = _open_journal(journal)
    try:
        if cut:
            os.ftruncate(fd, offset)
        written = 0
        while written < len(line):
            written += os.pwrite(fd, line[written:], offset + written)
        os.fdatasync(fd)
    finally:
        os.close(fd)


def _open_journal(journal: Path) -> int:
    try:
        return open_regular_for_append(journal, mode=CHECKPOINT_MODE)
    except FileNotFoundError:  # its directory is gone: make it, the journal starts again
        ensure_dir(journal.parent, mode=DIR_MODE)
        return open_regular_for_append(journal, mode=CHECKPOINT_MODE)
