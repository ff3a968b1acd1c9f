"""What a process costs, read from /proc: CPU seconds (user + system, all threads) and RSS."""

import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """The process's own user + system CPU time (its threads included, reaped children not)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14, 15)


def _status(pid: int, key: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return line.split(":", 1)[1].strip()
    raise KeyError(f"{key} not in /proc/{pid}/status")


def rss_mib(pid: int) -> float:
    return int(_status(pid, "VmRSS").split()[0]) / 1024


def threads(pid: int) -> int:
    return int(_status(pid, "Threads"))
