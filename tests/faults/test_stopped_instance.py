"""A plugin instance stopped (kill -STOP, a frozen cgroup) while it holds `serialize.lock`, the
lock per-pod instances share (app/services/instance_state_lock.py): the other instance's calls and
a new
instance's start wait a bounded time, then fail naming the stopped holder, instead of hanging
silently; the liveness check and GetInfo, which change no state, still answer."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager

from tests.faults.harness import PER_POD, FaultNode, create_claims, fault_node
from tests.support.controlplane import ControlPlane
from tests.support.kubelet import get_info, wait_for_registration_socket

WAIT_S = 60.0  # far past the lock's 10 s bound: how long the test waits for the verdict
HOLDER = """
import os, signal, sys
from pathlib import Path
from npu_dra.adapters.instance_lock import InstanceLock
with InstanceLock(Path(sys.argv[1])):
    print("held", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
"""


@contextmanager
def stopped_holder(node: FaultNode) -> Iterator[int]:
    """A process that took the node's `serialize.lock` and stopped; its pid."""
    lock = node.data_dir / "serialize.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(lock)], stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"held\n"
        yield holder.pid
    finally:
        holder.kill()
        holder.wait(timeout=30)


def exited_within(node: FaultNode, seconds: float) -> int | None:
    assert node.plugin is not None
    try:
        return node.plugin.popen.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None


def test_a_new_instance_beside_a_stopped_holder_says_who_holds_the_lock(
    access: ControlPlane,
) -> None:
    with fault_node(access, "stopped-start") as node:
        node.sockets = PER_POD
        node.data_dir.mkdir(parents=True, exist_ok=True)
        with stopped_holder(node) as pid:
            node.start()
            code = exited_within(node, WAIT_S)
            log = node.plugin.log(80) if node.plugin else ""

    assert code == 1, f"the start still waits after {WAIT_S:.0f}s:\n{log}"
    assert "serialize.lock: held for more than 10s" in log, log
    assert f"pid {pid} (stopped)" in log, log


def test_calls_beside_a_stopped_holder_fail_with_its_pid_and_liveness_answers(
    access: ControlPlane,
) -> None:
    with fault_node(access, "stopped-calls") as node:
        node.sockets = PER_POD
        fresh = create_claims(node, [["npu-0"]], prefix="new")
        node.start()
        with node.kubelet() as dra, stopped_holder(node) as pid:
            # within the kubelet's deadline (else DEADLINE_EXCEEDED), with the reason
            answer = dra.prepare(fresh, timeout=45).claims[fresh[0].uid]
            info = get_info(wait_for_registration_socket(node.host.registry))
            empty = dra.prepare([], timeout=5)  # the liveness check's own call

    assert f"pid {pid} (stopped)" in answer.error, answer
    assert info.name
    assert dict(empty.claims) == {}
