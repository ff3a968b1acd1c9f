"""ClaimPrefetch over the in-memory pods and cluster: a claim generated for a pod bound here is
read when the pod is bound and handed to the prepare, and only while it is certainly the claim
the kubelet asks for; every doubt is a miss (the prepare then reads the claim itself)."""

import threading
from collections.abc import Callable
from typing import Any

import pytest

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.cluster.memory_node_pods import MemoryNodePods
from npu_dra.app.services.claim_prefetch import ClaimPrefetch
from npu_dra.domain.claims import ClaimRef, NodePod, ResourceClaim
from npu_dra.domain.ids import ClaimName, ClaimUID, DriverName, Namespace, NodeName
from npu_dra.domain.ports import Stoppable
from tests.support.kubelet import allocated_claim

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
NAMESPACE = "team-a"


def run_now(task: Callable[[], None]) -> bool:
    task()
    return True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class World:
    """The API server's pods and claims, and a prefetch watching node-a."""

    def __init__(self, **options: Any) -> None:
        self.cluster = MemoryCluster()
        self.pods = MemoryNodePods(self.cluster)
        self.clock = Clock()
        options.setdefault("submit", run_now)
        self.prefetch = ClaimPrefetch(
            self.pods, node=NODE, driver=DRIVER, clock=self.clock, **options
        )
        self.watch: Stoppable = self.prefetch.watch()

    def claim(self, name: str, owner: str | None, reserved: tuple[str, ...], **kw: Any) -> ClaimRef:
        body = allocated_claim(name, ["npu-0"], namespace=NAMESPACE, pool=NODE, **kw)
        if owner:
            body["metadata"]["ownerReferences"] = [
                {"apiVersion": "v1", "kind": "Pod", "name": owner, "uid": owner, "controller": True}
            ]
        body["status"]["reservedFor"] = [
            {"resource": "pods", "name": u, "uid": u} for u in reserved
        ]
        made = self.cluster.create(body)
        return ClaimRef(Namespace(NAMESPACE), ClaimName(name), ClaimUID(made["metadata"]["uid"]))

    def pod(self, uid: str, *claims: str, node: str = NODE, phase: str = "Running") -> None:
        self.pods.apply(
            {
                "metadata": {"uid": uid, "namespace": NAMESPACE, "name": f"pod-{uid}"},
                "spec": {"nodeName": node},
                "status": {
                    "phase": phase,
                    "resourceClaimStatuses": [
                        {"name": f"c{n}", "resourceClaimName": c} for n, c in enumerate(claims)
                    ],
                },
            }
        )


def taken(world: World, ref: ClaimRef) -> ResourceClaim | None:
    return world.prefetch.take(ref)


def test_a_claim_generated_for_a_pod_bound_here_is_ready_at_prepare() -> None:
    world = World()
    ref = world.claim("gen-1", owner="p1", reserved=("p1",))
    world.pod("p1", "gen-1")
    assert world.prefetch.ready == 1
    claim = taken(world, ref)
    assert claim is not None
    assert claim.ref == ref
    assert [r.device for r in claim.results_for(DRIVER)] == ["npu-0"]
    assert (world.prefetch.hits, world.prefetch.misses, world.prefetch.ready) == (1, 0, 0)
    assert taken(world, ref) is None  # once: a failed prepare is retried with a read


def test_pods_bound_before_the_watch_started_are_read_from_the_list() -> None:
    world = World()
    world.watch.stop()
    ref = world.claim("gen-1", owner="p1", reserved=("p1",))
    world.pod("p1", "gen-1")
    world.prefetch.watch()
    assert taken(world, ref) is not None


@pytest.mark.parametrize(
    ("owner", "reserved", "extra"),
    [
        (None, ("p1",), {}),  # named by the pod, generated for nobody
        ("p2", ("p1",), {}),  # generated for another pod
        ("p1", (), {}),  # not reserved (yet)
        ("p1", ("p1", "p2"), {}),  # shared with another pod
        ("p1", ("p1",), {"driver": "gpu.example.com"}),  # nothing of ours in it
    ],
)
def test_only_a_claim_generated_for_the_pod_and_reserved_for_it_alone_is_kept(
    owner: str | None, reserved: tuple[str, ...], extra: dict[str, str]
) -> None:
    world = World()
    ref = world.claim("gen-1", owner=owner, reserved=reserved, **extra)
    world.pod("p1", "gen-1")
    assert taken(world, ref) is None
    assert world.prefetch.misses == 1


def test_a_claim_allocated_on_another_node_is_not_kept() -> None:
    world = World()
    body = allocated_claim("gen-1", ["npu-0"], namespace=NAMESPACE, pool=NODE)
    body["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p1", "uid": "p1", "controller": True}
    ]
    body["status"]["reservedFor"] = [{"resource": "pods", "name": "p1", "uid": "p1"}]
    selector = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-b"]}]}
    body["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [selector]}
    made = world.cluster.create(body)
    world.pod("p1", "gen-1")
    ref = ClaimRef(Namespace(NAMESPACE), ClaimName("gen-1"), ClaimUID(made["metadata"]["uid"]))
    assert taken(world, ref) is None


@pytest.mark.parametrize("ending", ["Succeeded", "Failed", "deleted", "being deleted"])
def test_the_entry_goes_when_its_pod_ends(ending: str) -> None:
    world = World()
    ref = world.claim("gen-1", owner="p1", reserved=("p1",))
    world.pod("p1", "gen-1")
    if ending == "deleted":
        world.pods.delete("p1")
    elif ending == "being deleted":
        world.pods.apply(
            {
                "metadata": {"uid": "p1", "namespace": NAMESPACE, "deletionTimestamp": "now"},
                "spec": {"nodeName": NODE},
            }
        )
    else:
        world.pod("p1", "gen-1", phase=ending)
    assert taken(world, ref) is None


def test_unprepare_relist_and_age_each_end_the_entry() -> None:
    world = World(ttl_s=60.0)
    first = world.claim("gen-1", owner="p1", reserved=("p1",))
    second = world.claim("gen-2", owner="p2", reserved=("p2",))
    third = world.claim("gen-3", owner="p3", reserved=("p3",))
    for uid, claim in (("p1", "gen-1"), ("p2", "gen-2"), ("p3", "gen-3")):
        world.pod(uid, claim)
    world.prefetch.forget([first.uid])
    assert taken(world, first) is None
    world.clock.now += 61
    assert taken(world, second) is None
    world.clock.now -= 61
    world.prefetch.listed([])  # the watch listed again: what it knew may be stale
    assert taken(world, third) is None


def test_an_entry_answers_only_the_namespace_name_and_uid_it_was_read_for() -> None:
    world = World()
    ref = world.claim("gen-1", owner="p1", reserved=("p1",))
    world.pod("p1", "gen-1")
    other = ClaimRef(Namespace("team-b"), ref.name, ref.uid)
    assert taken(world, other) is None
    assert taken(world, ref) is None  # a mismatch drops the entry: the next prepare reads


def test_pods_on_other_nodes_are_not_read() -> None:
    world = World()
    ref = world.claim("gen-1", owner="p1", reserved=("p1",))
    world.pod("p1", "gen-1", node="node-b")
    assert taken(world, ref) is None


def test_a_claim_not_there_yet_is_read_again_at_the_pods_next_change() -> None:
    world = World()
    world.pod("p1", "gen-1")  # the claim is created after the pod's status names it
    ref = world.claim("gen-1", owner="p1", reserved=("p1",))
    assert taken(world, ref) is None
    world.pod("p1", "gen-1")
    assert taken(world, ref) is not None


def test_reads_beyond_the_workers_are_left_to_the_prepare() -> None:
    cluster = MemoryCluster()
    pods = MemoryNodePods(cluster)
    prefetch = ClaimPrefetch(pods, node=NODE, driver=DRIVER, submit=lambda task: False)
    prefetch.watch()
    prefetch.changed(NodePod("p1", Namespace(NAMESPACE), "pod-p1", (ClaimName("gen-1"),), False))
    ref = ClaimRef(Namespace(NAMESPACE), ClaimName("gen-1"), ClaimUID("u-1"))
    assert prefetch.take(ref) is None


def test_at_most_max_entries_are_kept_the_oldest_going_first() -> None:
    world = World(max_entries=2)
    refs = [world.claim(f"gen-{n}", owner=f"p{n}", reserved=(f"p{n}",)) for n in range(3)]
    for n in range(3):
        world.pod(f"p{n}", f"gen-{n}")
    assert [taken(world, ref) is not None for ref in refs] == [False, True, True]


def held_reads(gate: threading.Event) -> Callable[[Callable[[], None]], bool]:
    """Runs each read on a thread of its own once `gate` opens: an API server still answering."""

    def submit(task: Callable[[], None]) -> bool:
        threading.Thread(target=lambda: (gate.wait(10), task()), daemon=True).start()
        return True

    return submit


def test_a_prepare_right_after_the_binding_waits_for_the_read_under_way() -> None:
    gate = threading.Event()
    world = World(submit=held_reads(gate))
    ref = world.claim("gen-1", owner="p1", reserved=("p1",))
    world.pod("p1", "gen-1")
    threading.Timer(0.05, gate.set).start()
    assert taken(world, ref) is not None
    assert world.prefetch.hits == 1


def test_the_wait_for_a_read_under_way_is_bounded() -> None:
    gate = threading.Event()
    world = World(submit=held_reads(gate))
    ref = world.claim("gen-1", owner="p1", reserved=("p1",))
    world.pod("p1", "gen-1")
    try:
        assert taken(world, ref) is None  # after AWAIT_READ_S: the prepare reads it itself
    finally:
        gate.set()
