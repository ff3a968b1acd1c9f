"""What a process costs, read from /proc: CPU seconds (user + system, all threads; or time on a
CPU to the nanosecond), RSS and threads."""

import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """The process's own user + system CPU time (its threads included, reaped children not)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14, 15)


def thread_run_ns(pid: int) -> dict[str, int]:
    """Nanoseconds on a CPU of each live thread, by thread id (/proc/<pid>/task/*/schedstat):
    for small amounts, such as a minute's idle CPU, that the 10 ms accounting tick of `cpu_s`
    cannot resolve."""
    found: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found[task.name] = int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):  # the thread ended meanwhile
            continue
    return found


def run_since(pid: int, before: dict[str, int]) -> float:
    """Seconds on a CPU since `before` (thread_run_ns): threads alive then and now count their
    difference, threads started since count whole. A thread that ended meanwhile counts nothing
    (summing live threads instead would subtract its whole past: an idle window in which a
    worker from the busy phase ends would come out negative)."""
    now = thread_run_ns(pid)
    return sum(ns - before.get(tid, 0) for tid, ns in now.items()) / 1e9


def _status(pid: int, key: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return line.split(":", 1)[1].strip()
    raise KeyError(f"{key} not in /proc/{pid}/status")


def rss_mib(pid: int) -> float:
    return int(_status(pid, "VmRSS").split()[0]) / 1024


def threads(pid: int) -> int:
    return int(_status(pid, "Threads"))
