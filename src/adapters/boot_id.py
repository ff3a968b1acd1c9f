"""Which boot of the node this is, and the boot the plugin last finished its after-boot repair in.

The kernel gives each boot a random UUID at /proc/sys/kernel/random/boot_id (`--boot-id-file`),
the same inside every container on the node (it is not namespaced): a new one means the node
rebooted, so its vNPUs are gone, its device nodes may be numbered otherwise, and a tmpfs CDI
directory is empty. The plugin records the boot it last repaired in (`boot-id` in its data dir,
one line, replaced atomically) once that repair has run with the hardware answering.
"""

import logging
import os
import re
import stat
from pathlib import Path

from npu_dra.adapters.atomic import ForeignEntry, atomic_write, read_regular, remove_temp_files
from npu_dra.domain.errors import StateError

log = logging.getLogger(__name__)

RECORD_NAME = "boot-id"
RECORD_MODE = 0o600
MAX_BYTES = 128  # a boot id is a 36-character UUID
BOOT_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z-]{0,63}")
# A kill between the record's temp file and its rename leaves the temp file. One younger than
# this may be another instance's write in flight (two run during a seamless upgrade): spared.
STALE_TEMP_S = 5.0


class BootIds:
    def __init__(self, source: Path, data_dir: Path) -> None:
        self.source = source
        self.record = data_dir / RECORD_NAME

    def current(self) -> str:
        """This boot's id; StateError naming the file (and the flag) if it cannot be read, or
        is not a regular file: a FIFO there is never waited on, a device never opened."""
        where = f"--boot-id-file {self.source}"
        try:
            data = read_regular_file(self.source, limit=MAX_BYTES)
        except NotRegular as error:
            raise StateError(f"{where}: {error}, not a regular file") from error
        except OSError as error:
            raise StateError(f"{where}: {error.strerror}") from error
        return self._parsed(data, where)

    def last(self) -> str | None:
        """The boot last repaired in; None if none is recorded (or the record is not ours)."""
        try:
            data = read_regular(self.record, limit=MAX_BYTES)
        except ForeignEntry as error:
            log.warning("%s: %s; taken as no boot recorded", self.record, error)
            return None
        except OSError as error:
            raise StateError(f"{self.record}: {error.strerror}") from error
        if data is None:
            return None
        try:
            return self._parsed(data, str(self.record))
        except StateError as error:
            log.warning("%s; taken as no boot recorded", error)
            return None

    def remove_temp_files(self) -> tuple[str, ...]:
        """Remove the temp files of record writes a kill cut short; their names."""
        return remove_temp_files(
            self.record.parent, [f".{RECORD_NAME}."], older_than_s=STALE_TEMP_S
        )

    def remember(self, boot_id: str) -> None:
        """Record `boot_id` as repaired in (atomically)."""
        try:
            atomic_write(
                self.record,
                f"{boot_id}\n".encode(),
                mode=RECORD_MODE,
                temp_prefix=f".{RECORD_NAME}.",
                dir_mode=0o700,
            )
        except OSError as error:
            raise StateError(f"{self.record}: cannot write: {error.strerror}") from error

    @staticmethod
    def _parsed(data: bytes, where: str) -> str:
        text = data.decode("ascii", errors="replace").strip()
        if len(data) > MAX_BYTES or not BOOT_ID.fullmatch(text):
            raise StateError(f"{where}: not a boot id: {text[:80]!r}")
        return text.lower()


class NotRegular(OSError):
    """What is at a path is not a regular file (its kind is the message)."""


def read_regular_file(path: Path, *, limit: int) -> bytes:
    """At most `limit` + 1 bytes of the regular file at `path` (links followed: a procfs file
    or a mounted ConfigMap's). Anything else is NotRegular: checked before the open, so a
    device is never opened, and again on the descriptor, opened non-blocking so that a FIFO
    put there in between is never waited on."""
    _check_regular(os.stat(path))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        _check_regular(os.fstat(fd))
        parts: list[bytes] = []
        total = 0
        while total <= limit and (chunk := os.read(fd, limit + 1 - total)):
            parts.append(chunk)
            total += len(chunk)
        return b"".join(parts)
    finally:
        os.close(fd)


def _check_regular(found: os.stat_result) -> None:
    if stat.S_ISREG(found.st_mode):
        return
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    raise NotRegular(next((what for test, what in kinds if test(found.st_mode)), "something else"))
