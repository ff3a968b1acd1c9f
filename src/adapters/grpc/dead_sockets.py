"""Socket files no process listens on any more: what a plugin instance killed with SIGKILL (or
lost with its node's power) leaves behind, which no later instance overwrites once each
instance has sockets of its own name (seamless upgrades). The kubelet keeps trying a
registration socket nobody answers; so a starting instance removes those that refuse a
connection. A socket somebody listens on accepts it, however busy, so nothing alive is
removed; one younger than MIN_AGE_S is left alone (its server may be between bind and listen).
"""

import errno
import fnmatch
import logging
import socket
import stat
import time
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

MIN_AGE_S = 10.0
CONNECT_S = 1.0


def remove_dead_sockets(
    directory: Path, patterns: Iterable[str], *, keep: Iterable[Path]
) -> list[Path]:
    """Remove the sockets in `directory` matching `patterns` (but not `keep`) that refuse a
    connection; the ones removed."""
    kept, wanted = {p.name for p in keep}, tuple(patterns)
    removed = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    for path in entries:
        if path.name in kept or not any(fnmatch.fnmatchcase(path.name, p) for p in wanted):
            continue
        if _dead(path):
            path.unlink(missing_ok=True)
            log.warning("removed %s: a socket no process listens on (an instance that died)", path)
            removed.append(path)
    return removed


def _dead(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    if not stat.S_ISSOCK(info.st_mode) or time.time() - info.st_mtime < MIN_AGE_S:
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(CONNECT_S)
    try:
        probe.connect(str(path))
    except OSError as error:
        return error.errno == errno.ECONNREFUSED
    finally:
        probe.close()
    return False
