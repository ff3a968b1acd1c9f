"""Which boot of the node this is, and the boot the plugin last finished its after-boot repair in.

The kernel gives each boot a random UUID at /proc/sys/kernel/random/boot_id (`--boot-id-file`),
the same inside every container on the node (it is not namespaced): a new one means the node
rebooted, so its vNPUs are gone, its device nodes may be numbered otherwise, and a tmpfs CDI
directory is empty. The plugin records the boot it last repaired in (`boot-id` in its data dir,
one line, replaced atomically) once that repair has run with the hardware answering.
"""

import logging
import re
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
        """This boot's id; StateError naming the file (and the flag) if it cannot be read."""
        try:
            with self.source.open("rb") as file:
                data = file.read(MAX_BYTES + 1)
        except OSError as error:
            raise StateError(f"--boot-id-file {self.source}: {error.strerror}") from error
        return self._parsed(data, f"--boot-id-file {self.source}")

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
