"""The claim status worker (app/services/claim_status.py) over the in-memory API: what it writes
after a prepare and an unprepare, in which state it decides, and how it backs off. The worker
runs unthreaded here (`run_due`), on a clock the test moves, so nothing waits on time."""

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.cluster.memory_claim_status import MemoryClaimStatus
from npu_dra.app.services.claim_status import ClaimStatusReports, ClaimStatusWorker
from npu_dra.domain.backoff import Backoff
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.device_facts import DeviceFacts
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.ports import CallerGone
from npu_dra.domain.prepare import ClaimOutcome
from npu_dra.domain.vnpu.instance import VnpuRecord

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
SHARE_A, SHARE_B = "11111111-2222-4333-8444-555555555555", "11111111-2222-4333-8444-666666666666"
CHIPS = NodeInventory(
    NODE,
    tuple(
        Device(
            name=DeviceName(f"npu-{n}"),
            physical_id=n,
            logic_id=n,
            card_id=n,
            chip_id=0,
            chip_name="910B4",
            memory_bytes=32 << 30,
            numa_node=n // 2,
        )
        for n in range(4)
    ),
)


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


class Node:
    """A node's state as the preparer would hold it, and the API server the worker writes to."""

    def __init__(self) -> None:
        self.cluster = MemoryCluster()
        self.checkpoint = Checkpoint()
        self.clock = Clock()
        self.writer = MemoryClaimStatus(self.cluster)

    def worker(self, writer: object | None = None, **options: Any) -> ClaimStatusWorker:
        return ClaimStatusWorker(
            writer or self.writer,  # type: ignore[arg-type]
            prepared=lambda: self.checkpoint, inventory=lambda: CHIPS, driver=DRIVER, node=NODE,
            clock=self.clock, threaded=False,
            backoff=lambda: Backoff(1.0, 8.0, spread=lambda low, high: 1.0), **options,
        )  # fmt: skip

    def claim(self, name: str, *devices: tuple[str, str | None]) -> ClaimRef:
        created = self.cluster.create({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "team"}, "spec": {"devices": {"requests": []}},
        })  # fmt: skip
        ref = ClaimRef(Namespace("team"), ClaimName(name), ClaimUID(created["metadata"]["uid"]))
        results = tuple(
            AllocationResult(RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(d), share_id=s)
            for d, s in devices
        )
        self.cluster.set_allocation(ref, Allocation(results, NODE))
        return ref

    def prepared(self, ref: ClaimRef, *devices: PreparedDevice) -> None:
        self.checkpoint = self.checkpoint.with_claim(PreparedClaim(ref, devices))

    def entries(self, ref: ClaimRef) -> list[dict[str, Any]]:
        claim = self.cluster.get("ResourceClaim", ref.name, ref.namespace) or {}
        return list(claim.get("status", {}).get("devices", []))


def device(name: str, **fields: Any) -> PreparedDevice:
    return PreparedDevice((RequestName("npu"),), PoolName(NODE), DeviceName(name), (f"x={name}",),
                          **fields)  # fmt: skip


@pytest.fixture
def node() -> Node:
    return Node()


def test_a_prepared_claim_gets_a_ready_entry_per_device(node: Node) -> None:
    ref = node.claim("job", ("npu-0", None), ("npu-3", None))
    node.prepared(ref, device("npu-0"), device("npu-3"))
    worker = node.worker()
    worker.report(ref)
    assert worker.run_due() == 1
    entries = node.entries(ref)
    assert [(e["device"], e["data"]["physicalId"], e["data"]["numaNode"]) for e in entries] == [
        ("npu-0", 0, 0), ("npu-3", 3, 1),
    ]  # fmt: skip
    assert {c["type"] + "=" + c["status"] for e in entries for c in e["conditions"]} == {
        "Ready=True"
    }


def test_an_unprepared_claim_loses_its_entries(node: Node) -> None:
    ref = node.claim("job", ("npu-0", None))
    node.prepared(ref, device("npu-0"))
    worker = node.worker()
    worker.report(ref)
    worker.run_due()
    node.checkpoint = node.checkpoint.without(ref.uid)
    worker.clear(ref)
    worker.run_due()
    assert node.entries(ref) == []


def test_a_report_overtaken_by_the_unprepare_is_not_sent(node: Node) -> None:
    ref = node.claim("job", ("npu-0", None))
    worker = node.worker()
    worker.report(ref)  # the claim is no longer in the state when the worker gets to it
    worker.run_due()
    assert node.writer.writes == 0


def test_each_share_of_one_chip_has_its_own_entry_naming_its_share(node: Node) -> None:
    a = node.claim("a", ("npu-1", SHARE_A))
    b = node.claim("b", ("npu-1", SHARE_B))
    node.prepared(a, device("npu-1", share_id=SHARE_A))
    node.prepared(b, device("npu-1", share_id=SHARE_B))
    worker = node.worker()
    worker.report(a)
    worker.report(b)
    worker.run_due()
    assert [e.get("shareID") for e in node.entries(a)] == [SHARE_A]
    assert [e.get("shareID") for e in node.entries(b)] == [SHARE_B]


def test_a_vnpu_entry_names_its_vnpu(node: Node) -> None:
    ref = node.claim("job", ("npu-2-vnpu-0", None))
    vnpu = VnpuRecord(vnpu_id=102, chip=DeviceName("npu-2"), template="vir05_1c_16g")
    node.prepared(ref, device("npu-2-vnpu-0", vnpu=vnpu))
    worker = node.worker()
    worker.report(ref)
    worker.run_due()
    [entry] = node.entries(ref)
    assert (entry["data"]["vnpuId"], entry["data"]["vnpuTemplate"]) == (102, "vir05_1c_16g")


def test_the_other_instance_clears_what_this_one_wrote(node: Node) -> None:
    """Per-pod sockets: two instances share one state and write as one field manager."""
    ref = node.claim("job", ("npu-0", None))
    node.prepared(ref, device("npu-0"))
    old, new = node.worker(), node.worker()
    old.report(ref)
    old.run_due()
    node.checkpoint = node.checkpoint.without(ref.uid)
    new.clear(ref)
    new.run_due()
    assert node.entries(ref) == []


class Outage:
    """A writer failing its first `failures` writes, then writing through."""

    def __init__(self, inner: MemoryClaimStatus, failures: int) -> None:
        self.inner, self.failures, self.tries = inner, failures, 0

    def write_device_status(
        self, *, ref: ClaimRef, driver: DriverName, node: NodeName, devices: Sequence[DeviceFacts]
    ) -> None:
        self.tries += 1
        if self.tries <= self.failures:
            raise ClusterUnavailable("the API server is down")
        self.inner.write_device_status(ref=ref, driver=driver, node=node, devices=devices)


def test_an_outage_is_retried_after_a_doubling_wait(node: Node) -> None:
    ref = node.claim("job", ("npu-0", None))
    node.prepared(ref, device("npu-0"))
    outage = Outage(node.writer, failures=2)
    worker = node.worker(outage)
    worker.report(ref)
    assert worker.run_due() == 1  # failed; due again in 1 s
    node.clock.now = 0.9
    assert worker.run_due() == 0
    node.clock.now = 1.0
    assert worker.run_due() == 1  # failed again; due in 2 s more
    node.clock.now = 2.9
    assert worker.run_due() == 0
    node.clock.now = 3.0
    worker.run_due()
    assert len(node.entries(ref)) == 1
    assert worker.idle()


def test_a_write_failing_every_try_is_given_up(node: Node) -> None:
    ref = node.claim("job", ("npu-0", None))
    node.prepared(ref, device("npu-0"))
    worker = node.worker(Outage(node.writer, failures=99), attempts=3)
    worker.report(ref)
    for now in (0.0, 1.0, 3.0, 100.0):
        node.clock.now = now
        worker.run_due()
    assert (worker.given_up, worker.idle()) == (1, True)


def test_past_capacity_a_wish_is_dropped_not_waited_for(node: Node) -> None:
    worker = node.worker(capacity=1)
    first, second = node.claim("a", ("npu-0", None)), node.claim("b", ("npu-1", None))
    worker.report(first)
    worker.report(second)
    worker.clear(first)  # the same claim's newer wish replaces its older one
    assert worker.dropped == 1


def test_a_deleted_claim_is_not_retried(node: Node) -> None:
    ref = node.claim("job", ("npu-0", None))
    node.prepared(ref, device("npu-0"))
    node.cluster.delete("ResourceClaim", ref.name, ref.namespace)
    worker = node.worker()
    worker.report(ref)
    worker.run_due()
    assert (worker.idle(), worker.given_up) == (True, 0)


class Answers:
    def __init__(
        self, prepare: Mapping[ClaimUID, ClaimOutcome], unprepare: dict[ClaimUID, str | None]
    ) -> None:
        self.outcomes, self.errors = prepare, unprepare

    def prepare(
        self, refs: Sequence[ClaimRef], caller_gone: CallerGone | None = None
    ) -> Mapping[ClaimUID, ClaimOutcome]:
        return self.outcomes

    def unprepare(self, refs: Sequence[ClaimRef]) -> Mapping[ClaimUID, str | None]:
        return self.errors


def test_only_claims_that_were_prepared_or_unprepared_are_noted(node: Node) -> None:
    ok, failed = node.claim("ok", ("npu-0", None)), node.claim("failed", ("npu-1", None))
    node.prepared(ok, device("npu-0"))
    worker = node.worker()
    answers = Answers(
        {ok.uid: ClaimOutcome(), failed.uid: ClaimOutcome(error="no")},
        {ok.uid: "still busy", failed.uid: None},
    )
    reports = ClaimStatusReports(answers, worker)
    assert reports.prepare([ok, failed]) is answers.outcomes
    assert worker.run_due() == 1
    assert len(node.entries(ok)) == 1
    assert reports.unprepare([ok, failed]) is answers.errors
    assert worker.run_due() == 1  # the clear of `failed` (unprepared); `ok`'s stays
    assert len(node.entries(ok)) == 1
