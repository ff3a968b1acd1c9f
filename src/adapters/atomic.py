"""Replacing a file so readers see the old content or the new, never a mix (the Go CDI writer's
recipe): temp file in the same directory, write, fsync, rename over the target, fsync the dir.

With `flush=False` the two fsyncs are left out: readers still never see a mix, but a power loss
may lose the file. Only for files another durable record can rebuild (the CDI specs, which the
checkpoint backs and the start-up repair rewrites).
"""

import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

TEMP_SUFFIX = ".tmp"


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
    directory: Path, prefixes: Iterable[str], *, older_than_s: float = 0.0
) -> tuple[str, ...]:
    """Remove `<prefix>*.tmp` files a crashed write left in `directory`; their names.

    Call it only when no write of ours can be in flight (at start). `older_than_s` spares the
    young temp files of other writers that share a prefix with us.
    """
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return ()
    cutoff = time.time() - older_than_s
    removed: list[str] = []
    for name in names:
        if not name.endswith(TEMP_SUFFIX) or not any(name.startswith(p) for p in prefixes):
            continue
        path = directory / name
        try:
            if older_than_s and path.lstat().st_mtime > cutoff:
                continue
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(name)
    return tuple(removed)
