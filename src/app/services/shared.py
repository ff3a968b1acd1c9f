"""SharedState: the node's claims when another plugin instance shares their state.

During a seamless upgrade (app/kubelet_plugin/instance.py) an old and a new plugin pod serve one
node over one data directory, and the kubelet may prepare a claim through one and unprepare it
through the other. So every call that reads or changes the state (the kubelet's prepares and
unprepares, the start-up and hardware repairs) holds the instance lock (adapters/instance_lock:
a file lock both processes take) from its start until its change is saved, and reads the
checkpoint again first: the other instance may have changed it since this one last looked.
Within the lock a call is the preparer's as ever (its own locks, group commit, vNPU chip locks).

What it costs: the calls of one node run one at a time across both instances, and each reads
the checkpoint once (the Go kubeletplugin helper serializes every call the same way, with or
without a second instance). Only plugins with per-pod sockets pay it; one instance alone keeps
its parallel prepares.
"""

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager

from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.restart_repair import RepairReport
from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.ports import CallerGone
from npu_dra.domain.prepare import ClaimOutcome


class SharedState:
    def __init__(self, preparer: ClaimPreparer, lock: AbstractContextManager[object]) -> None:
        self._preparer = preparer
        self._lock = lock

    def prepare(
        self, refs: Sequence[ClaimRef], caller_gone: CallerGone | None = None
    ) -> Mapping[ClaimUID, ClaimOutcome]:
        with self._held():
            return self._preparer.prepare(refs, caller_gone)

    def unprepare(self, refs: Sequence[ClaimRef]) -> Mapping[ClaimUID, str | None]:
        with self._held():
            return self._preparer.unprepare(refs)

    def prepared(self) -> Checkpoint:
        with self._held():
            return self._preparer.prepared()

    def repair(self) -> RepairReport:
        with self._held():
            return self._preparer.repair()

    def repair_state(self) -> RepairReport:
        with self._held():
            return self._preparer.repair_state()

    def repair_hardware(self) -> RepairReport:
        with self._held():
            return self._preparer.repair_hardware()

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        with self._lock:
            self._preparer.reread()
            yield


def shared_if_seamless(
    preparer: ClaimPreparer, lock: AbstractContextManager[object] | None
) -> "ClaimPreparer | SharedState":
    """The preparer itself where this instance is alone on its node, else wrapped."""
    return preparer if lock is None else SharedState(preparer, lock)
