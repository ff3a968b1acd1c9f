"""Uninstalling from a node (app/services/uninstall.py): the DaemonSet's fate read from its
watch, prepares refused once the plugin drains, and the drain itself, which lets the plugin stop
only once every claim it prepared was unprepared, and then leaves no CDI spec behind."""

from __future__ import annotations

import logging
import threading

import pytest

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.uninstall import (
    UNINSTALLING,
    DaemonSetFate,
    Drain,
    UninstallGate,
)
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimName, ClaimUID, DriverName, Namespace, NodeName
from npu_dra.domain.profile import ASCEND_NPU
from tests.support.kubelet import allocated_claim

NODE, DRIVER = NodeName("n1"), DriverName("npu.huawei.com")


class Node:
    """One node's claims: the API objects, the preparer over in-memory stores, the gate."""

    def __init__(self) -> None:
        self.cluster = MemoryCluster()
        self.cdi, self.checkpoints = MemoryCdiStore(), MemoryCheckpointStore()
        self.gate = UninstallGate(
            ClaimPreparer(
                cluster=self.cluster,
                cdi=self.cdi,
                checkpoints=self.checkpoints,
                inventory=InventoryCache(FakeHardware({"chip": "910B4", "count": 8}, node=NODE)),
                driver=DRIVER,
                profile=ASCEND_NPU,
            ),
            self.checkpoints,
        )

    def claim(self, name: str, device: str) -> ClaimRef:
        made = self.cluster.create(allocated_claim(name, [device], namespace="ns", pool=NODE))
        meta = made["metadata"]
        return ClaimRef(Namespace("ns"), ClaimName(name), ClaimUID(meta["uid"]))

    def drain(self) -> Drain:
        return Drain(checkpoints=self.checkpoints, cdi=self.cdi, gate=self.gate, poll_s=0.01)


# -- the DaemonSet's fate ------------------------------------------------------------------------


def test_a_daemonset_seen_then_deleted_means_uninstalling() -> None:
    fate = DaemonSetFate("ascend-dra/npu-dra")
    fate.report(standing=True)
    assert not fate.uninstalling
    fate.report(standing=False)
    assert fate.uninstalling


def test_a_daemonset_never_seen_is_not_an_uninstall(caplog: pytest.LogCaptureFixture) -> None:
    """A mistyped --daemonset-name must not make every restart wait for all pods to end."""
    fate = DaemonSetFate("ascend-dra/typo")
    with caplog.at_level(logging.WARNING):
        fate.report(standing=False)
        fate.report(standing=False)
    assert not fate.uninstalling
    [warning] = [r.getMessage() for r in caplog.records]
    assert "ascend-dra/typo" in warning
    assert "--daemonset-name" in warning


def test_a_daemonset_created_again_is_no_longer_an_uninstall() -> None:
    """`kubectl delete --cascade=orphan` and apply again (a new selector): the pods stay."""
    fate = DaemonSetFate("ascend-dra/npu-dra")
    fate.report(standing=True)
    fate.report(standing=False)
    fate.report(standing=True)
    assert not fate.uninstalling


# -- the gate ------------------------------------------------------------------------------------


def test_a_closed_gate_refuses_each_new_claim_with_the_reason() -> None:
    node = Node()
    ref = node.claim("a", "npu-0")
    node.gate.close()
    outcome = node.gate.prepare([ref])[ref.uid]
    assert outcome.error == UNINSTALLING
    assert "being uninstalled" in UNINSTALLING
    assert node.checkpoints.load().claims == {}
    assert node.cdi.claim_uids() == frozenset()


def test_a_closed_gate_still_answers_prepared_claims_and_unprepares() -> None:
    """The kubelet retries a prepare it already made (its own restart): that is no new claim."""
    node = Node()
    ref = node.claim("a", "npu-0")
    assert node.gate.prepare([ref])[ref.uid].error is None
    node.gate.close()
    assert node.gate.prepare([ref])[ref.uid].error is None
    assert node.gate.unprepare([ref]) == {ref.uid: None}
    assert node.checkpoints.load().claims == {}


# -- the drain -----------------------------------------------------------------------------------


def test_the_drain_waits_until_every_claim_is_unprepared() -> None:
    node = Node()
    refs = [node.claim("a", "npu-0"), node.claim("b", "npu-1")]
    node.gate.prepare(refs)
    drain, done = node.drain(), []
    waiting = threading.Thread(target=lambda: done.append(drain.run(threading.Event())))
    waiting.start()
    node.gate.unprepare(refs[:1])
    waiting.join(timeout=0.2)
    assert waiting.is_alive(), "stopped with a claim still prepared"
    node.gate.unprepare(refs[1:])
    waiting.join(timeout=5)
    assert done == [True]


def test_the_drain_refuses_new_claims_while_it_waits() -> None:
    node = Node()
    held, late = node.claim("a", "npu-0"), node.claim("b", "npu-1")
    node.gate.prepare([held])
    interrupted = threading.Event()
    waiting = threading.Thread(target=node.drain().run, args=(interrupted,))
    waiting.start()
    try:
        assert node.gate.prepare([late])[late.uid].error == UNINSTALLING
    finally:
        interrupted.set()
        waiting.join(timeout=5)


def test_the_drain_removes_the_cdi_specs_left_once_no_claim_is_prepared() -> None:
    node = Node()
    ref = node.claim("a", "npu-0")
    node.gate.prepare([ref])
    orphan = node.cdi.read(uid=ref.uid)
    assert orphan is not None
    node.gate.unprepare([ref])
    node.cdi.write(uid=ref.uid, spec=orphan)  # a spec the checkpoint does not back
    assert node.drain().run(threading.Event()) is True
    assert node.cdi.claim_uids() == frozenset()


def test_an_interrupted_drain_keeps_the_claims_and_their_specs() -> None:
    """A second SIGTERM: the state is left for whoever serves the node next."""
    node = Node()
    ref = node.claim("a", "npu-0")
    node.gate.prepare([ref])
    interrupted = threading.Event()
    interrupted.set()
    assert node.drain().run(interrupted) is False
    assert set(node.checkpoints.load().claims) == {ref.uid}
    assert node.cdi.claim_uids() == {ref.uid}


def test_the_drain_says_which_claims_it_waits_for(caplog: pytest.LogCaptureFixture) -> None:
    node = Node()
    ref = node.claim("train", "npu-0")
    node.gate.prepare([ref])
    interrupted = threading.Event()
    with caplog.at_level(logging.INFO):
        waiting = threading.Thread(target=node.drain().run, args=(interrupted,))
        waiting.start()
        try:
            waiting.join(timeout=0.1)
        finally:
            interrupted.set()
            waiting.join(timeout=5)
    said = [r.getMessage() for r in caplog.records if "unprepared" in r.getMessage()]
    assert len(said) == 1, said  # backed off: not once per poll
    assert "1 claim" in said[0]
    assert "ns/train" in said[0]
