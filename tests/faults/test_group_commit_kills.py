"""kill -9 while several callers' prepares and unprepares share checkpoint saves (group commit):
every claim a caller was told is prepared is in the checkpoint after the restart, nothing is held
twice, no spec is orphaned and no temp file is left (the storm's checker, storm.py).

Each caller plays one kubelet worker with claims of its own (on NPUs of its own), so what each
was told never depends on another's calls; after every restart each resends the call the kill
cut off, as the kubelet does, before the disk is checked.
"""

from __future__ import annotations

import random
import threading

import grpc

from tests.faults.harness import FaultNode, check, create_claims, fault_node
from tests.faults.storm import Kubelet
from tests.support.controlplane import ControlPlane
from tests.support.kubelet import DraClient, WireClaim

KILLS = 6
CALLERS = 4  # two NPUs each, one claim per NPU


def _caller(
    dra: DraClient, kubelet: Kubelet, claims: list[WireClaim], seed: int, stop: threading.Event
) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        op = rng.choice(("prepare", "unprepare"))
        try:
            kubelet.send(dra, op, rng.sample(claims, rng.randint(1, len(claims))))
        except grpc.RpcError:
            return  # killed mid-call: `interrupted` stays set and is resent after the restart


def _resend_and_check(node: FaultNode, dra: DraClient, kubelets: list[Kubelet]) -> list[str]:
    for kubelet in kubelets:
        if kubelet.interrupted is not None:
            kubelet.send(dra, *kubelet.interrupted)
    held = {uid for kubelet in kubelets for uid in kubelet.held}
    found = check(node, held)
    problems = [] if found.whole else [repr(found)]
    return problems + [problem for kubelet in kubelets for problem in kubelet.double]


def test_kill_nine_while_concurrent_calls_share_saves_loses_nothing(
    access: ControlPlane,
) -> None:
    rng = random.Random(20261123)
    problems: list[str] = []
    told = 0
    with fault_node(access, "group") as node:
        claims = create_claims(node, [[f"npu-{i}"] for i in range(2 * CALLERS)])
        mine = [claims[2 * i : 2 * i + 2] for i in range(CALLERS)]
        kubelets = [Kubelet() for _ in range(CALLERS)]
        for kill in range(KILLS):
            node.start()
            with node.kubelet() as dra:
                problems += _resend_and_check(node, dra, kubelets)
                stop = threading.Event()
                callers = [
                    threading.Thread(
                        target=_caller,
                        args=(dra, kubelets[i], mine[i], kill * CALLERS + i, stop),
                        daemon=True,
                    )
                    for i in range(CALLERS)
                ]
                for caller in callers:
                    caller.start()
                stop.wait(rng.uniform(0.05, 0.6))
                assert node.plugin is not None
                node.plugin.kill()
                stop.set()
                for caller in callers:
                    caller.join(timeout=60)
                told += sum(len(kubelet.held) for kubelet in kubelets)
        node.start()
        with node.kubelet() as dra:
            problems += _resend_and_check(node, dra, kubelets)

    assert problems == []
    assert told > 0  # some prepares were acknowledged between kills: the check had work
