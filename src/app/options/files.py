"""Files a flag names, read when the flags are parsed: only a regular file, and only so much of
it. A FIFO, a socket or a device put at the path is refused by its kind, without a blocking open
(a FIFO with no writer would hold the start for good, deaf to SIGTERM) and, for a device, before
any open at all. The plugins' own state files are read by adapters/atomic.py; this is the flags'
side, kept here because the CLI's options load no adapter (`npu-dra --help` stays instant)."""

import argparse
import os
import stat

KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def read_flag_file(path: str, *, limit: int) -> bytes:
    """The bytes of the regular file at `path` (links followed: a mounted ConfigMap's file is
    one); ArgumentTypeError naming the path for anything else, or for more than `limit` bytes."""
    try:
        _check_regular(path, os.stat(path))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        raise argparse.ArgumentTypeError(f"{path}: {error.strerror}") from None
    try:
        _check_regular(path, os.fstat(fd))  # what was opened, should the path have changed
        data = _read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise argparse.ArgumentTypeError(f"{path}: more than {limit} bytes")
    return data


def _check_regular(path: str, found: os.stat_result) -> None:
    if not stat.S_ISREG(found.st_mode):
        kind = next((what for test, what in KINDS if test(found.st_mode)), "something else")
        raise argparse.ArgumentTypeError(f"{path}: {kind}, not a regular file")


def _read(fd: int, most: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while total < most and (chunk := os.read(fd, most - total)):
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)
