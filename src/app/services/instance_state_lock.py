"""InstanceStateLock: the preparer's state lock when another plugin instance shares its state.

During a seamless upgrade (app/kubelet_plugin/instance.py) an old and a new plugin pod serve one
node over one data directory, and the kubelet may prepare a claim through one and unprepare it
through the other. So each step that reads or changes the state (the preparer's sections under
its state lock: a prepare's commit, an unprepare, a repair's writes) also holds the instance lock
(adapters/instance_lock: a file lock both processes take), reads the checkpoint again first (the
other instance may have changed it since this one last looked), and saves its change before the
lock goes, so the other instance never reads behind it.

What is not under it: everything that waits on the network or a hardware tool. A prepare reads
its claims from the API server, asks the chips' sharing mode and makes its vNPUs outside the
state lock, as it does with one instance (app/services/preparer.py), so an API outage or a hung
npu-smi on one call never holds another call, in this instance or the other one. Calls that
change nothing (the liveness check's empty prepare) take no lock at all. A prepare still waiting
on the API when the other instance unprepares its claim is cancelled across instances too
(app/services/inflight.py, adapters/cancel_marks.py).

What it costs: the steps of one node's calls run one at a time across both instances, each reads
the checkpoint once and saves without sharing the save with other calls (group commit needs the
save to happen outside the lock); milliseconds of local disk. Only plugins with per-pod sockets
pay it; one instance alone keeps its group commit.
"""

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import TracebackType


class InstanceStateLock:
    """`local` (this process's state lock), then `instance`; `entered` runs once both are held
    (the preparer forgets the checkpoint it read), `leaving` before they go (the save)."""

    def __init__(
        self,
        local: AbstractContextManager[object],
        instance: AbstractContextManager[object],
        *,
        entered: Callable[[], None],
        leaving: Callable[[], None],
    ) -> None:
        self._local, self._instance = local, instance
        self._entered, self._leaving = entered, leaving
        self._held = contextlib.ExitStack()  # one holder at a time: `local` is held

    def __enter__(self) -> "InstanceStateLock":
        with contextlib.ExitStack() as stack:
            stack.enter_context(self._local)
            stack.enter_context(self._instance)
            self._entered()
            self._held = stack.pop_all()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        held = self._held
        try:
            self._leaving()
        finally:
            held.close()
