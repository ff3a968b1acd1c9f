"""ClaimPreparer over the in-memory cluster, CDI and checkpoint stores and fake hardware.

The stores are wrapped by small journaling fakes of our own, so tests assert on what was written
and in which order, never on calls to mocks.
"""

import threading
from collections.abc import Iterable
from typing import Any

import attrs
import pytest

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.claim_fetch import Prefetched
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.domain.cdi import CdiSpec
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef, ResourceClaim
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.errors import ClusterUnavailable, StateError
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
from npu_dra.domain.ports import CheckpointStore
from npu_dra.domain.prepare import ClaimOutcome
from npu_dra.domain.profile import ASCEND_NPU

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
SHARED = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
HARDWARE = {"chip": "910B4", "count": 8, "numaNodes": [6, 6, 4, 4, 0, 0, 2, 2]}


class JournalCdiStore:
    """A MemoryCdiStore that records each write and remove."""

    def __init__(self, journal: list[str]) -> None:
        self.memory = MemoryCdiStore()
        self.journal = journal

    def write(self, *, uid: ClaimUID, spec: CdiSpec) -> None:
        self.journal.append(f"cdi write {uid}")
        self.memory.write(uid=uid, spec=spec)

    def read(self, *, uid: ClaimUID) -> CdiSpec | None:
        return self.memory.read(uid=uid)

    def remove(self, *, uid: ClaimUID) -> None:
        self.journal.append(f"cdi remove {uid}")
        self.memory.remove(uid=uid)

    def claim_uids(self) -> frozenset[ClaimUID]:
        return self.memory.claim_uids()


class JournalCheckpointStore:
    """A MemoryCheckpointStore that records each save."""

    def __init__(self, journal: list[str]) -> None:
        self.memory = MemoryCheckpointStore()
        self.journal = journal

    def load(self) -> Checkpoint:
        return self.memory.load()

    def save(self, *, checkpoint: Checkpoint) -> None:
        self.journal.append("checkpoint save")
        self.memory.save(checkpoint=checkpoint)


class FullDiskCheckpointStore:
    """Loads an empty checkpoint; every save fails as a full disk would."""

    def load(self) -> Checkpoint:
        return Checkpoint()

    def save(self, *, checkpoint: Checkpoint) -> None:
        raise StateError("checkpoint /var/lib/kubelet/plugins/x/checkpoint.json: disk full")


class CountingProbe:
    """Fake hardware that counts how often it was probed (npu-smi is slow on real nodes)."""

    def __init__(self) -> None:
        self.hardware = FakeHardware(HARDWARE, node=NODE)
        self.probes = 0

    def probe(self) -> NodeInventory:
        self.probes += 1
        return self.hardware.probe()


class GatedCluster:
    """A MemoryCluster whose claim reads can be held (a paused API server) or made to fail
    (an outage); it counts reads and the most that were in flight at once."""

    def __init__(self) -> None:
        self.memory = MemoryCluster()
        self.open = threading.Event()
        self.open.set()
        self.down = False
        self.reads = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.entered = threading.Semaphore(0)
        self._lock = threading.Lock()

    def get_claim(self, *, ref: ClaimRef) -> ResourceClaim:
        with self._lock:
            self.reads += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        self.entered.release()
        try:
            self.open.wait(timeout=10)
            if self.down:
                raise ClusterUnavailable("reading ResourceClaim: connection refused")
            return self.memory.get_claim(ref=ref)
        finally:
            with self._lock:
                self.in_flight -= 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.memory, name)


class Node:
    """One node's preparer and everything it touches."""

    def __init__(
        self,
        checkpoints: CheckpointStore | None = None,
        fetch_deadline_s: float = 20.0,
        prefetched: Prefetched | None = None,
    ) -> None:
        self.journal: list[str] = []
        self.cluster = GatedCluster()
        self.cdi = JournalCdiStore(self.journal)
        self.checkpoints = JournalCheckpointStore(self.journal)
        self.probe = CountingProbe()
        self.preparer = ClaimPreparer(
            fetch_deadline_s=fetch_deadline_s,
            cluster=self.cluster,  # type: ignore[arg-type]
            cdi=self.cdi,
            checkpoints=checkpoints or self.checkpoints,
            inventory=InventoryCache(self.probe),
            driver=DRIVER,
            profile=ASCEND_NPU,
            prefetched=prefetched,
        )

    def claim(self, name: str, *devices: str, pool: str = NODE) -> ClaimRef:
        """A ResourceClaim in the API, allocated to `devices` as the scheduler would."""
        created = self.cluster.create(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "ascend-dra"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "npu", "exactly": {"deviceClassName": DRIVER}}]
                    }
                },
            }
        )
        ref = ClaimRef(Namespace("ascend-dra"), ClaimName(name), created["metadata"]["uid"])
        results = tuple(
            AllocationResult(RequestName("npu"), DRIVER, PoolName(pool), DeviceName(d))
            for d in devices
        )
        self.cluster.set_allocation(ref, Allocation(results, NODE))
        return ref

    def prepare(self, *refs: ClaimRef) -> dict[ClaimUID, ClaimOutcome]:
        return self.preparer.prepare(list(refs))

    def device_nodes(self, ref: ClaimRef) -> tuple[str, ...]:
        spec = self.cdi.read(uid=ref.uid)
        assert spec is not None, f"no CDI spec for {ref}"
        return spec.device_nodes()

    def checkpointed(self) -> dict[ClaimUID, list[str]]:
        claims = self.checkpoints.load().claims
        return {uid: [d.device for d in c.devices] for uid, c in claims.items()}

    def documents(self) -> dict[ClaimUID, Any]:
        return dict(self.cdi.memory.documents)


def devices(outcome: ClaimOutcome) -> list[str]:
    assert outcome.error is None, outcome.error
    return [d.device for d in outcome.devices]


def stranger(uid: str = "0f0f0f0f-0000-4000-8000-000000000000") -> ClaimRef:
    return ClaimRef(Namespace("ascend-dra"), ClaimName("gone"), ClaimUID(uid))


@pytest.fixture
def node() -> Node:
    return Node()


def test_prepare_writes_the_cdi_spec_then_the_checkpoint(node: Node) -> None:
    ref = node.claim("npu-claim", "npu-0", "npu-1")
    outcome = node.prepare(ref)[ref.uid]
    assert devices(outcome) == ["npu-0", "npu-1"]
    assert node.journal == [f"cdi write {ref.uid}", "checkpoint save"]
    assert node.device_nodes(ref) == (*SHARED, "/dev/davinci0", "/dev/davinci1")
    assert node.checkpointed() == {ref.uid: ["npu-0", "npu-1"]}
    assert [d.cdi_ids for d in outcome.devices] == [
        (f"k8s.npu.huawei.com/npu={ref.uid}-npu-0",),
        (f"k8s.npu.huawei.com/npu={ref.uid}-npu-1",),
    ]


def test_prepare_is_idempotent_for_a_checkpointed_claim(node: Node) -> None:
    ref = node.claim("npu-claim", "npu-2")
    first = node.prepare(ref)
    journal, documents, stored = (
        list(node.journal),
        node.documents(),
        node.checkpoints.memory.document,
    )
    again = node.prepare(ref)
    assert again == first
    assert node.journal == journal
    assert node.documents() == documents
    assert node.documents()[ref.uid] is documents[ref.uid]
    assert node.checkpoints.memory.document is stored


def test_prepare_of_a_checkpointed_claim_recreates_its_missing_spec(node: Node) -> None:
    ref = node.claim("npu-claim", "npu-2")
    node.prepare(ref)
    written = node.cdi.read(uid=ref.uid)
    node.cdi.memory.documents.clear()  # a reboot emptied the tmpfs CDI directory
    del node.journal[:]
    assert devices(node.prepare(ref)[ref.uid]) == ["npu-2"]
    assert node.cdi.read(uid=ref.uid) == written
    assert node.journal == [f"cdi write {ref.uid}"]


def test_one_bad_claim_among_good_ones_gets_its_own_error(node: Node) -> None:
    first = node.claim("first", "npu-0")
    unknown_device = node.claim("unknown-device", "npu-9")
    elsewhere = node.claim("elsewhere", "npu-5", pool="node-b")
    deleted = stranger()
    last = node.claim("last", "npu-1")
    outcomes = node.prepare(first, unknown_device, elsewhere, deleted, last)
    assert devices(outcomes[first.uid]) == ["npu-0"]
    assert devices(outcomes[last.uid]) == ["npu-1"]
    assert "device 'npu-9': no such device on node 'node-a'" in str(
        outcomes[unknown_device.uid].error
    )
    assert "allocated from pool 'node-b'" in str(outcomes[elsewhere.uid].error)
    assert "not found" in str(outcomes[deleted.uid].error)
    assert node.cdi.claim_uids() == {first.uid, last.uid}
    assert set(node.checkpointed()) == {first.uid, last.uid}


def test_a_device_another_claim_holds_is_refused_to_the_second_claim(node: Node) -> None:
    holder = node.claim("holder", "npu-0")
    late = node.claim("late", "npu-0")
    outcomes = node.prepare(holder, late)
    assert devices(outcomes[holder.uid]) == ["npu-0"]
    assert f"already prepared for claim {holder.uid}" in str(outcomes[late.uid].error)
    assert node.cdi.read(uid=late.uid) is None


def test_unprepare_works_after_the_claim_is_deleted_from_the_api(node: Node) -> None:
    ref = node.claim("npu-claim", "npu-0")
    node.prepare(ref)
    node.cluster.delete("ResourceClaim", ref.name, ref.namespace)
    assert node.preparer.unprepare([ref]) == {ref.uid: None}
    assert node.cdi.read(uid=ref.uid) is None
    assert node.checkpointed() == {}


def test_unprepare_removes_the_spec_before_the_checkpoint_entry(node: Node) -> None:
    ref = node.claim("npu-claim", "npu-0")
    node.prepare(ref)
    del node.journal[:]
    node.preparer.unprepare([ref])
    assert node.journal == [f"cdi remove {ref.uid}", "checkpoint save"]


def test_unprepare_is_idempotent_and_never_touches_another_claims_spec(node: Node) -> None:
    gone, kept = node.claim("gone", "npu-0"), node.claim("kept", "npu-1")
    node.prepare(gone, kept)
    kept_document = node.documents()[kept.uid]
    assert node.preparer.unprepare([gone]) == {gone.uid: None}
    assert node.preparer.unprepare([gone]) == {gone.uid: None}
    assert node.preparer.unprepare([stranger()]) == {stranger().uid: None}
    assert node.documents() == {kept.uid: kept_document}
    assert node.checkpointed() == {kept.uid: ["npu-1"]}


def test_a_device_is_free_again_after_unprepare(node: Node) -> None:
    first = node.claim("first", "npu-0")
    node.prepare(first)
    node.preparer.unprepare([first])
    second = node.claim("second", "npu-0")
    assert devices(node.prepare(second)[second.uid]) == ["npu-0"]


def test_repair_recreates_a_missing_spec_and_removes_an_orphan(node: Node) -> None:
    kept, orphan = node.claim("kept", "npu-3"), node.claim("orphan", "npu-4")
    node.prepare(kept, orphan)
    written = node.cdi.read(uid=kept.uid)
    node.cdi.memory.remove(uid=kept.uid)  # lost in a reboot
    checkpoint = node.checkpoints.memory.load()
    node.checkpoints.memory.save(checkpoint=checkpoint.without(orphan.uid))  # crash mid-unprepare
    report = node.preparer.repair()
    assert (report.rewritten, report.removed, report.unrepairable) == (
        (kept.uid,),
        (orphan.uid,),
        (),
    )
    assert node.cdi.read(uid=kept.uid) == written
    assert node.cdi.claim_uids() == {kept.uid}


def test_repair_leaves_intact_state_alone(node: Node) -> None:
    node.prepare(node.claim("a", "npu-0"), node.claim("b", "npu-1"))
    del node.journal[:]
    report = node.preparer.repair()
    assert (report.rewritten, report.removed, report.unrepairable) == ((), (), ())
    assert node.journal == []


def gone_device_claim(node: Node) -> ClaimRef:
    """A checkpointed claim whose device is no longer on the node and whose spec is lost."""
    ref = stranger("5a5a5a5a-0000-4000-8000-000000000000")
    lost = PreparedDevice(
        (RequestName("npu"),), PoolName(NODE), DeviceName("npu-9"), ("k8s.npu.huawei.com/npu=x",)
    )
    node.checkpoints.memory.save(checkpoint=Checkpoint().with_claim(PreparedClaim(ref, (lost,))))
    return ref


def test_repair_reports_a_claim_whose_device_is_gone_and_repairs_the_rest(node: Node) -> None:
    ghost = gone_device_claim(node)
    kept = node.claim("kept", "npu-0")
    node.prepare(kept)
    node.cdi.memory.remove(uid=kept.uid)
    report = node.preparer.repair()
    assert report.rewritten == (kept.uid,)
    assert report.unrepairable == ()
    [(ref, why)] = report.gone
    assert ref.uid == ghost.uid
    assert "npu-9 is gone from this node" in why


def test_a_checkpointed_claim_whose_spec_cannot_be_rebuilt_fails_alone(node: Node) -> None:
    ghost = gone_device_claim(node)
    good = node.claim("good", "npu-0")
    outcomes = node.prepare(ghost, good)
    assert "npu-9" in str(outcomes[ghost.uid].error)
    assert devices(outcomes[good.uid]) == ["npu-0"]


def test_a_failed_checkpoint_save_removes_the_spec_it_just_wrote() -> None:
    node = Node(checkpoints=FullDiskCheckpointStore())
    ref = node.claim("npu-claim", "npu-0")
    outcome = node.prepare(ref)[ref.uid]
    assert "disk full" in str(outcome.error)
    assert outcome.devices == ()
    assert node.journal == [f"cdi write {ref.uid}", f"cdi remove {ref.uid}"]
    assert node.cdi.claim_uids() == frozenset()


def test_prepare_never_probes_hardware_after_the_first_inventory_load(node: Node) -> None:
    refs = [node.claim(f"claim-{i}", f"npu-{i}") for i in range(4)]
    node.prepare(refs[0])
    node.prepare(*refs[1:])
    node.prepare(*refs)
    node.preparer.unprepare(refs[:2])
    node.preparer.repair()
    assert node.probe.probes == 1


def test_prepared_reports_the_checkpoint(node: Node) -> None:
    ref = node.claim("npu-claim", "npu-7")
    node.prepare(ref)
    assert [d.device for d in node.preparer.prepared().claims[ref.uid].devices] == ["npu-7"]


def prepare_in_background(node: Node, *refs: ClaimRef) -> tuple[threading.Thread, dict[str, Any]]:
    answer: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: answer.update(node.prepare(*refs)), daemon=True)
    thread.start()
    return thread, answer


def test_an_unprepare_while_the_prepare_waits_on_the_api_leaves_nothing_prepared(
    node: Node,
) -> None:
    ref = node.claim("slow", "npu-0")
    node.cluster.open.clear()  # the API server pauses
    thread, answer = prepare_in_background(node, ref)
    assert node.cluster.entered.acquire(timeout=10)
    # The kubelet's call timed out: it unprepares, finds nothing, and never asks again.
    assert node.preparer.unprepare([ref]) == {ref.uid: None}
    node.cluster.open.set()
    thread.join(timeout=10)
    assert "unprepared while this prepare waited" in str(answer[ref.uid].error)
    assert node.cdi.claim_uids() == frozenset()
    assert node.checkpointed() == {}
    again = node.claim("next-pod", "npu-0")
    assert devices(node.prepare(again)[again.uid]) == ["npu-0"]


def test_an_unprepare_that_overtook_the_prepare_before_it_ran_leaves_nothing_prepared(
    node: Node,
) -> None:
    """The kubelet gave up on the call (its pod is being deleted) and unprepared before the
    prepare got a worker: the unprepare found nothing to cancel, so only the caller being gone,
    asked once the prepare is registered, tells the prepare not to commit."""
    ref = node.claim("overtaken", "npu-0")
    assert node.preparer.unprepare([ref]) == {ref.uid: None}  # came first, found nothing

    answer = node.preparer.prepare([ref], caller_gone=lambda: True)

    assert "gave up on this call" in str(answer[ref.uid].error)
    assert node.cluster.reads == 0
    assert node.cdi.claim_uids() == frozenset()
    assert node.checkpointed() == {}
    again = node.claim("next-pod", "npu-0")
    assert devices(node.preparer.prepare([again], caller_gone=lambda: False)[again.uid]) == [
        "npu-0"
    ]


def test_a_late_prepare_of_many_claims_commits_none_of_the_unprepared_ones(node: Node) -> None:
    refs = [node.claim(f"many-{i}", f"npu-{i % 8}") for i in range(3)]
    node.cluster.open.clear()
    thread, answer = prepare_in_background(node, *refs)
    assert node.cluster.entered.acquire(timeout=10)
    node.preparer.unprepare(refs)
    node.cluster.open.set()
    thread.join(timeout=10)
    assert all(answer[ref.uid].error for ref in refs)
    assert node.cdi.claim_uids() == frozenset()
    assert node.checkpointed() == {}


def test_prepare_of_checkpointed_claims_makes_no_api_call(node: Node) -> None:
    refs = [node.claim(f"ready-{i}", f"npu-{i}") for i in range(3)]
    first = node.prepare(*refs)
    reads = node.cluster.reads
    node.cluster.down = True  # an outage: every read would fail after its retry budget
    assert node.prepare(*refs) == first
    assert node.cluster.reads == reads


def test_claims_of_one_call_are_read_concurrently(node: Node) -> None:
    refs = [node.claim(f"parallel-{i}", f"npu-{i}") for i in range(6)]
    node.cluster.open.clear()
    thread, answer = prepare_in_background(node, *refs)
    for _ in refs:
        assert node.cluster.entered.acquire(timeout=10)
    node.cluster.open.set()
    thread.join(timeout=10)
    assert node.cluster.most_in_flight == len(refs)
    assert sorted(d for ref in refs for d in devices(answer[ref.uid])) == [
        f"npu-{i}" for i in range(6)
    ]


def test_a_claim_the_api_does_not_return_in_time_gets_its_own_error() -> None:
    node = Node(fetch_deadline_s=0.2)
    ready = node.claim("ready", "npu-1")
    node.prepare(ready)
    stuck = node.claim("stuck", "npu-0")
    node.cluster.open.clear()
    try:
        outcomes = node.prepare(ready, stuck)
    finally:
        node.cluster.open.set()
    assert devices(outcomes[ready.uid]) == ["npu-1"]
    assert "did not answer within 0.2s" in str(outcomes[stuck.uid].error)
    assert set(node.checkpointed()) == {ready.uid}


def test_a_known_uid_under_another_name_gets_an_error_and_not_the_devices(node: Node) -> None:
    ref = node.claim("owner", "npu-3")
    node.prepare(ref)
    impostor = attrs.evolve(ref, name=ClaimName("impostor"))
    outcome = node.prepare(impostor)[ref.uid]
    assert outcome.devices == ()
    assert "is prepared for ascend-dra/owner" in str(outcome.error)


def test_unprepare_of_a_known_uid_under_another_identity_keeps_the_claim(node: Node) -> None:
    ref = node.claim("owner", "npu-3")
    node.prepare(ref)
    for impostor in (
        attrs.evolve(ref, name=ClaimName("impostor")),
        attrs.evolve(ref, namespace=Namespace("other")),
    ):
        assert "is prepared for ascend-dra/owner" in str(
            node.preparer.unprepare([impostor])[ref.uid]
        )
    assert node.checkpointed() == {ref.uid: ["npu-3"]}
    assert node.cdi.read(uid=ref.uid) is not None


def test_a_claim_sent_twice_in_one_call_is_read_once_and_answered_at_once() -> None:
    node = Node(fetch_deadline_s=30.0)
    ref = node.claim("twice", "npu-4")
    outcomes = node.prepare(ref, ref)
    assert devices(outcomes[ref.uid]) == ["npu-4"]
    assert node.cluster.reads == 1


def test_a_read_that_fails_unexpectedly_is_that_claims_error_at_once() -> None:
    node = Node(fetch_deadline_s=30.0)
    ref = node.claim("broken", "npu-4")
    node.cluster.memory.get_claim = lambda *, ref: {}["no such key"]  # type: ignore[method-assign]
    outcome = node.prepare(ref)[ref.uid]
    assert "cannot read it: KeyError" in str(outcome.error)


class HeldCheckpointStore(JournalCheckpointStore):
    """Saves wait while `held` is clear (a slow disk flush); each save is journaled on entry."""

    def __init__(self, journal: list[str]) -> None:
        super().__init__(journal)
        self.held = threading.Event()
        self.held.set()
        self.entered = threading.Semaphore(0)

    def save(self, *, checkpoint: Checkpoint) -> None:
        self.journal.append("checkpoint save")
        self.entered.release()
        assert self.held.wait(timeout=10)
        self.memory.save(checkpoint=checkpoint)


def held_node() -> tuple[Node, HeldCheckpointStore]:
    store = HeldCheckpointStore([])
    node = Node(checkpoints=store)
    node.checkpoints = store
    return node, store


def test_a_prepare_is_answered_only_once_its_checkpoint_save_returned() -> None:
    node, store = held_node()
    ref = node.claim("durable", "npu-0")
    store.held.clear()
    thread, answer = prepare_in_background(node, ref)
    assert store.entered.acquire(timeout=10)
    thread.join(timeout=0.2)
    assert answer == {}  # written, not yet durable: the kubelet must not hear "prepared"
    store.held.set()
    thread.join(timeout=10)
    assert devices(answer[ref.uid]) == ["npu-0"]


def test_concurrent_prepares_share_checkpoint_saves() -> None:
    node, store = held_node()
    refs = [node.claim(f"together-{i}", f"npu-{i}") for i in range(6)]
    store.held.clear()
    first = prepare_in_background(node, refs[0])
    assert store.entered.acquire(timeout=10)
    others = [prepare_in_background(node, ref) for ref in refs[1:]]
    for _ in range(1000):  # until all five have staged their claims and wait on the next save
        if len(node.preparer.prepared().claims) == 6:
            break
        threading.Event().wait(0.01)
    store.held.set()
    for thread, _ in (first, *others):
        thread.join(timeout=10)
    answered = [answer[ref.uid] for (_, answer), ref in zip((first, *others), refs, strict=True)]
    assert [devices(a) for a in answered] == [[f"npu-{i}"] for i in range(6)]
    assert store.journal.count("checkpoint save") == 2
    assert set(node.checkpointed()) == {ref.uid for ref in refs}


def test_an_unprepare_whose_save_fails_keeps_the_claim_and_says_why() -> None:
    store = FullDiskAfterFirstSave()
    node = Node(checkpoints=store)
    ref = node.claim("kept", "npu-0")
    assert devices(node.prepare(ref)[ref.uid]) == ["npu-0"]
    error = node.preparer.unprepare([ref])[ref.uid]
    assert "disk full" in str(error)
    assert list(node.preparer.prepared().claims) == [ref.uid]
    assert list(store.memory.load().claims) == [ref.uid]


class FullDiskAfterFirstSave:
    def __init__(self) -> None:
        self.memory = MemoryCheckpointStore()

    def load(self) -> Checkpoint:
        return self.memory.load()

    def save(self, *, checkpoint: Checkpoint) -> None:
        if self.memory.document is not None:
            raise StateError("checkpoint: disk full")
        self.memory.save(checkpoint=checkpoint)


class Ready:
    """Claims a prefetch holds: taken as they are until forgotten."""

    def __init__(self) -> None:
        self.claims: dict[ClaimUID, ResourceClaim] = {}

    def take(self, ref: ClaimRef) -> ResourceClaim | None:
        return self.claims.get(ref.uid)

    def forget(self, uids: Iterable[ClaimUID]) -> None:
        for uid in uids:
            self.claims.pop(uid, None)


def test_a_prefetched_claim_is_prepared_without_reading_it_and_read_again_after_unprepare() -> None:
    ready = Ready()
    node = Node(prefetched=ready)
    ref = node.claim("pre", "npu-3")
    other = node.claim("read", "npu-4")
    ready.claims[ref.uid] = node.cluster.memory.get_claim(ref=ref)
    node.cluster.down = True  # any read now fails
    outcomes = node.prepare(ref, other)
    assert devices(outcomes[ref.uid]) == ["npu-3"]
    assert "connection refused" in (outcomes[other.uid].error or "")
    assert node.cluster.reads == 1  # the other claim's only
    assert node.preparer.unprepare([ref]) == {ref.uid: None}
    assert ref.uid not in ready.claims
    assert "connection refused" in (node.prepare(ref)[ref.uid].error or "")
