"""Preparing shares of chips through ClaimPreparer (#31): the chip's sharing mode is turned on
before its first share is prepared, once per chip, never for whole chips; a chip without the
mode fails only the claims sharing it; unpreparing one share leaves the others; a restart asks
the hardware again only where a reboot may have turned the mode off.

Over the in-memory cluster, CDI and checkpoint stores and fake hardware, whose sharing mode
(`FakeSharingMode`) is asserted on by its state.
"""

import pytest

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.sharing_mode import FakeSharingMode
from npu_dra.app.services.chip_sharing.sharing_mode import SharingModeService
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.domain.chip_sharing.policy import SharingPolicy
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef
from npu_dra.domain.device import Device
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
from npu_dra.domain.prepare import ClaimOutcome
from npu_dra.domain.profile import ASCEND_NPU
from npu_dra.domain.quantity import Quantity

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
SHARE_IDS = ("0f3c6a2e-1d5b-4c7a-9e8f-2a1b3c4d5e6f", "7d9e1f20-3a4b-4c5d-8e6f-708192a3b4c5")


class AskedShare:
    """The fake's sharing mode, with each chip it was asked for kept in order (`asked`), and
    a failure to give once (`fail_next`)."""

    def __init__(self, mode: FakeSharingMode) -> None:
        self.mode = mode
        self.asked: list[str] = []
        self.fail_next: str | None = None

    def enable_device_share(self, *, device: Device) -> bool:
        self.asked.append(device.name)
        if self.fail_next is not None:
            failure, self.fail_next = self.fail_next, None
            raise ProbeError(failure)
        return self.mode.enable_device_share(device=device)


class Node:
    def __init__(self, chip: str = "910B4") -> None:
        self.cluster, self.cdi = MemoryCluster(), MemoryCdiStore()
        self.checkpoints = MemoryCheckpointStore()
        self.hardware = FakeHardware({"chip": chip, "count": 4}, node=NODE)
        self.preparer, self.share = self.restart()

    def restart(self) -> tuple[ClaimPreparer, AskedShare]:
        """A new plugin process over the same stores and chips."""
        share = AskedShare(self.hardware.device_share())
        preparer = ClaimPreparer(
            cluster=self.cluster, cdi=self.cdi, checkpoints=self.checkpoints,
            inventory=InventoryCache(self.hardware), driver=DRIVER, profile=ASCEND_NPU,
            # retry_after_s=0: a retry asks again at once (the wait: test_chip_flights.py)
            shares=SharingModeService(
                hardware=share, policy=SharingPolicy(shares=4), retry_after_s=0.0
            ),
        )  # fmt: skip
        self.preparer, self.share = preparer, share
        return preparer, share

    def claim(self, name: str, *devices: str, share_id: str | None = None) -> ClaimRef:
        made = self.cluster.create(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "ns"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "npu", "exactly": {"deviceClassName": DRIVER}}]
                    }
                },
            }
        )
        ref = ClaimRef(Namespace("ns"), ClaimName(name), made["metadata"]["uid"])
        consumed = () if share_id is None else (("memCapacity", Quantity.parse("8Gi")),)
        results = tuple(
            AllocationResult(
                RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(d),
                share_id=share_id, consumed_capacity=consumed,
            )
            for d in devices
        )  # fmt: skip
        self.cluster.set_allocation(ref, Allocation(results, NODE))
        return ref

    def prepare(self, *refs: ClaimRef) -> dict[ClaimUID, ClaimOutcome]:
        return self.preparer.prepare(list(refs))

    @property
    def turned_on(self) -> list[str]:
        return list(self.share.mode.turned_on)


def ok(outcome: ClaimOutcome) -> list[str]:
    assert outcome.error is None, outcome.error
    return [d.device for d in outcome.devices]


@pytest.fixture
def node() -> Node:
    return Node()


def test_a_chip_is_put_in_sharing_mode_once_before_its_first_share(node: Node) -> None:
    first, second = node.claim("first", "npu-0-share-0"), node.claim("second", "npu-0-share-1")
    outcomes = node.prepare(first, second)
    assert [ok(outcomes[r.uid]) for r in (first, second)] == [["npu-0-share-0"], ["npu-0-share-1"]]
    third = node.claim("third", "npu-0", share_id=SHARE_IDS[0])
    assert ok(node.prepare(third)[third.uid]) == ["npu-0"]
    assert node.share.asked == ["npu-0"]  # the third found it on: the hardware is not asked
    assert node.turned_on == ["npu-0"]


def test_whole_chips_are_never_put_in_sharing_mode(node: Node) -> None:
    whole = node.claim("whole", "npu-2", "npu-3")
    assert ok(node.prepare(whole)[whole.uid]) == ["npu-2", "npu-3"]
    assert node.share.asked == []
    assert node.share.mode.on == set()


def test_a_chip_without_the_mode_fails_only_the_claims_sharing_it() -> None:
    node = Node(chip="910A")
    shared, whole = node.claim("shared", "npu-0-share-0"), node.claim("whole", "npu-1")
    outcomes = node.prepare(shared, whole)
    error = outcomes[shared.uid].error
    assert error is not None
    assert "npu-0 (910A, Ascend910 family) has no container-sharing mode" in error
    assert ok(outcomes[whole.uid]) == ["npu-1"]
    assert node.cdi.read(uid=shared.uid) is None
    assert set(node.checkpoints.load().claims) == {whole.uid}


def test_a_failed_mode_change_fails_the_claim_and_a_retry_prepares_it(node: Node) -> None:
    ref = node.claim("shared", "npu-1", share_id=SHARE_IDS[1])
    node.share.fail_next = "npu-1: `npu-smi set -t device-share -i 1 -c 0 -d 1` failed"
    error = node.prepare(ref)[ref.uid].error
    assert error is not None
    assert "npu-smi set -t device-share" in error
    assert node.cdi.read(uid=ref.uid) is None
    assert node.checkpoints.load().claims == {}
    assert ok(node.prepare(ref)[ref.uid]) == ["npu-1"]  # the kubelet's retry
    assert node.turned_on == ["npu-1"]


def test_unpreparing_one_share_leaves_the_other_claims_spec_and_record(node: Node) -> None:
    leaving, staying = (
        node.claim("leaving", "npu-0-share-0"),
        node.claim("staying", "npu-0-share-1"),
    )
    node.prepare(leaving, staying)
    spec, record = node.cdi.read(uid=staying.uid), node.checkpoints.load().claims[staying.uid]
    assert node.preparer.unprepare([leaving]) == {leaving.uid: None}
    assert node.cdi.read(uid=leaving.uid) is None
    assert node.cdi.read(uid=staying.uid) == spec
    assert node.checkpoints.load().claims == {staying.uid: record}
    whole = node.claim("whole", "npu-0")
    error = node.prepare(whole)[whole.uid].error
    assert error is not None
    assert f"already prepared for claim {staying.uid}" in error
    assert node.share.mode.on == {"npu-0"}  # never turned off while a share is held


def test_a_restart_prepares_recorded_shares_again_without_asking_the_hardware(node: Node) -> None:
    ref = node.claim("shared", "npu-0-share-2")
    first = node.prepare(ref)
    node.restart()
    assert node.prepare(ref) == first
    assert node.share.asked == []
    assert node.preparer.repair_hardware().unrepairable == ()
    assert node.turned_on == ["npu-0"]  # the repair found it on: nothing changed


def test_the_repair_after_a_reboot_turns_the_mode_on_again_for_recorded_shares(node: Node) -> None:
    shared, whole = node.claim("shared", "npu-1-share-0"), node.claim("whole", "npu-3")
    node.prepare(shared, whole)
    node.share.mode.reboot()
    node.restart()
    assert node.preparer.repair_hardware().unrepairable == ()
    assert node.turned_on == ["npu-1", "npu-1"]
    assert node.share.mode.on == {"npu-1"}


def test_a_repair_that_cannot_turn_the_mode_on_says_so(node: Node) -> None:
    ref = node.claim("shared", "npu-2-share-0")
    node.prepare(ref)
    node.share.mode.reboot()
    node.restart()
    node.share.fail_next = "npu-2: npu-smi hung"
    [problem] = node.preparer.repair_hardware().unrepairable
    assert problem.startswith("chip npu-2 is not back in sharing mode")
    assert problem.endswith("npu-2: npu-smi hung")
