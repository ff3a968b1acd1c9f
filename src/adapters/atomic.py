"""Files in directories others can write to (the runtime's CDI directory, shared with other
drivers) or that must hold only what we wrote (the plugin's data directory).

Replacing (`atomic_write`), the Go CDI writer's recipe: temp file in the same directory, write,
fsync, rename over the target, fsync the dir. Readers see the old content or the new, never a
mix, and nothing already at the target's name is ever written through: the temp file is created
with O_CREAT|O_EXCL|O_NOFOLLOW (`tempfile.mkstemp`), and the rename replaces whatever entry held
the name (a link, a FIFO, a second hard link) instead of opening it. With `flush=False` the two
fsyncs are left out: readers still never see a mix, but a power loss may lose the file. Only for
files another durable record can rebuild (the CDI specs, which the checkpoint backs and the
start-up repair rewrites).

Reading (`read_regular`): only a regular file is opened (a FIFO would block the reader for good,
a device node may act on being opened), never through a link (O_NOFOLLOW), never blocking
(O_NONBLOCK), and at most `limit` bytes are read, once. Anything else at the name is a
`ForeignEntry`: not ours; the caller reports it (`ForeignEntries`, once per entry) and skips it.
"""

import errno
import logging
import os
import stat
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

TEMP_SUFFIX = ".tmp"
READ_CHUNK = 1 << 16
REPORTED_LIMIT = 1024  # distinct foreign entries remembered (reported once each) per store
# What opening a name that is not a regular file of ours can fail with: a link (O_NOFOLLOW), a
# socket or a FIFO without a reader (O_NONBLOCK writers), a directory (written).
_FOREIGN_ERRNOS = frozenset({errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.ENOTDIR})


class ForeignEntry(OSError):
    """A name holds something this plugin never puts there: a link, a FIFO, a directory, a
    device or socket, a second hard link, or a file larger than any of ours. An OSError, so
    that a writer's `except OSError` reports it like any other failed write."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


class Oversized(ForeignEntry):
    """A regular file larger than the reader's limit (its content is never read)."""


class ForeignEntries:
    """Logs each foreign entry once (its path and why), so a caller that meets it again on
    every call or retry does not repeat itself; once our write replaces it, `forget` it, and a
    new one planted there is reported again."""

    def __init__(self, where: str) -> None:
        self._where = where
        self._seen: dict[str, str] = {}

    def report(self, entry: ForeignEntry, *, action: str = "left in place") -> None:
        path = str(entry.path)
        if self._seen.get(path) == entry.why:
            return
        if len(self._seen) >= REPORTED_LIMIT:
            self._seen.clear()
        self._seen[path] = entry.why
        log.warning(
            "%s: %s: %s, not a file this plugin wrote (%s)", self._where, path, entry.why, action
        )

    def forget(self, path: Path) -> None:
        self._seen.pop(str(path), None)


def atomic_write(
    path: Path,
    data: bytes,
    *,
    mode: int,
    temp_prefix: str,
    dir_mode: int = 0o755,
    flush: bool = True,
) -> None:
    directory = path.parent
    try:
        fd, temp = tempfile.mkstemp(prefix=temp_prefix, suffix=TEMP_SUFFIX, dir=directory)
    except FileNotFoundError:  # created on first use (or again, if someone removed it)
        ensure_dir(directory, mode=dir_mode)
        fd, temp = tempfile.mkstemp(prefix=temp_prefix, suffix=TEMP_SUFFIX, dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fchmod(out.fileno(), mode)
            if flush:
                os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    if flush:
        fsync_dir(directory)


def fsync_dir(directory: Path) -> None:
    """Make a rename or unlink in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_dir(directory: Path, *, mode: int, existing: bool = False) -> None:
    """Create `directory` (and parents) with exactly `mode`, whatever the umask; with `existing`
    an existing directory's mode is set too (one we own, such as the plugin's data dir)."""
    try:
        directory.mkdir(mode=mode, parents=True)
    except FileExistsError:
        if not existing:
            return
    os.chmod(directory, mode)


def remove_temp_files(
    directory: Path,
    prefixes: Iterable[str],
    *,
    older_than_s: float = 0.0,
    foreign: ForeignEntries | None = None,
) -> tuple[str, ...]:
    """Remove `<prefix>*.tmp` files a crashed write left in `directory`; their names.

    Call it only when no write of ours can be in flight (at start). `older_than_s` spares the
    young temp files of other writers that share a prefix with us. Only regular files go: any
    other entry under such a name is not ours, and is reported to `foreign` and left; so is a
    file that cannot be removed (the start goes on: a temp file is never read as a spec).
    """
    ours = tuple(prefixes)
    try:
        with os.scandir(directory) as entries:
            names = sorted(e.name for e in entries if _is_temp_name(e.name, ours))
    except FileNotFoundError:
        return ()
    cutoff = time.time() - older_than_s if older_than_s else None
    return tuple(name for name in names if _remove_temp(directory / name, cutoff, foreign))


def _is_temp_name(name: str, prefixes: tuple[str, ...]) -> bool:
    return name.endswith(TEMP_SUFFIX) and name.startswith(prefixes)


def _remove_temp(path: Path, cutoff: float | None, foreign: ForeignEntries | None) -> bool:
    """Remove one temp file of ours (if last changed before `cutoff`); False if not removed."""
    try:
        found = os.lstat(path)
        if not stat.S_ISREG(found.st_mode):
            raise ForeignEntry(path, _kind(found))
        if cutoff is not None and found.st_mtime > cutoff:
            return False
        path.unlink()
    except FileNotFoundError:
        return False
    except ForeignEntry as e:
        if foreign is not None:
            foreign.report(e)
        return False
    except OSError as e:
        log.warning("%s: cannot remove temp file %s: %s", path.parent, path, e.strerror or e)
        return False
    return True


def identity(*paths: Path) -> tuple[tuple[int, ...], ...] | None:
    """The files' inode, size and times (links not followed): any write, rename or truncation
    changes it; None if one is missing."""
    try:
        found = [os.lstat(path) for path in paths]
    except OSError:
        return None
    return tuple((f.st_ino, f.st_size, f.st_mtime_ns, f.st_ctime_ns) for f in found)


def read_regular(path: Path, *, limit: int) -> bytes | None:
    """The bytes of the regular file at `path` (None if nothing is there); ForeignEntry for
    anything else, or for a file over `limit` bytes (its content is then never read)."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    _check_regular(path, found, limit)  # before opening: a device node may act on an open
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno in _FOREIGN_ERRNOS:  # replaced between the lstat and the open
            raise ForeignEntry(path, "replaced by something else while opened") from e
        raise
    try:
        size = _check_regular(path, os.fstat(fd), limit)
        data = _read_at_most(fd, size, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise Oversized(path, f"larger than the {limit}-byte limit (it grew while read)")
    return data


def open_regular_for_append(path: Path, *, mode: int) -> int:
    """A descriptor open for writing on the regular file at `path` that has no other name
    (created if absent); ForeignEntry if a link, FIFO, directory or hard link is there."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
    try:
        fd = os.open(path, flags, mode)
    except OSError as e:
        if e.errno in _FOREIGN_ERRNOS:
            raise ForeignEntry(path, _kind_of(path)) from e
        raise
    found = os.fstat(fd)
    if stat.S_ISREG(found.st_mode) and found.st_nlink == 1:
        return fd
    os.close(fd)
    why = "a file with other names (hard links)" if stat.S_ISREG(found.st_mode) else _kind(found)
    raise ForeignEntry(path, why)


def _check_regular(path: Path, found: os.stat_result, limit: int) -> int:
    if not stat.S_ISREG(found.st_mode):
        raise ForeignEntry(path, _kind(found))
    if found.st_size > limit:
        raise Oversized(path, f"{found.st_size} bytes, larger than the {limit}-byte limit")
    return found.st_size


def _read_at_most(fd: int, size: int, most: int) -> bytes:
    """Up to `most` bytes: `size` (what fstat said) in one read, more only if the file grew."""
    parts: list[bytes] = []
    total, step = 0, min(size, most) + 1
    while total < most:
        chunk = os.read(fd, min(step, most - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        step = READ_CHUNK
    return b"".join(parts)


def _kind_of(path: Path) -> str:
    try:
        return _kind(os.lstat(path))
    except OSError:
        return "replaced by something else while opened"


def _kind(found: os.stat_result) -> str:
    kinds = (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((what for test, what in kinds if test(found.st_mode)), "not a regular file")
