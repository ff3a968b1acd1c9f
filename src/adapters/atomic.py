"""Replacing a file so readers see the old content or the new, never a mix (the Go CDI writer's
recipe): temp file in the same directory, write, fsync, rename over the target, fsync the dir.
"""

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes, *, mode: int, temp_prefix: str) -> None:
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=temp_prefix, suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    fsync_dir(directory)


def fsync_dir(directory: Path) -> None:
    """Make a rename or unlink in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
