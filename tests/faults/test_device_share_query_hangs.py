"""A chip's sharing-mode question hangs (#44): npu-smi's `info -t device-share` (or DCMI's call)
answers nothing until its timeout. Before, every prepare of a share of that chip asked again,
one after another under the chip's lock: six pods on one chip answered at 10, 20, 30, 40 s and
the last two past the kubelet's 45 s. Now the question is asked once per chip at a time, and
every prepare waiting on it, or arriving just after it failed, gets its answer at once.

In-process, over the in-memory stores and a sharing mode that holds the question until the test
lets it fail (as a timeout would); the real plugin process: test_shared_chips_restarts.py.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.chip_sharing.sharing_mode import SharingModeService
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.domain.chip_sharing.policy import SharingPolicy
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef, ResourceClaim
from npu_dra.domain.device import Device
from npu_dra.domain.ids import (
    ClaimName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.profile import ASCEND_NPU

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
PODS = 6
TIMED_OUT = "`npu-smi info -t device-share -i 0 -c 0` did not answer within 10s"


class HangingQuery:
    """A sharing mode whose question hangs until `give_up` makes it fail as a timeout does;
    each chip asked, in order (`asked`)."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.entered, self._gave_up = threading.Event(), threading.Event()

    def enable_device_share(self, *, device: Device) -> bool:
        self.asked.append(device.name)
        self.entered.set()
        self._gave_up.wait()
        raise ProbeError(f"{device.name}: {TIMED_OUT}")

    def give_up(self) -> None:
        self._gave_up.set()


class CountingCluster(MemoryCluster):
    """Counts the claim reads, so the test knows every prepare has read its claim."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = threading.Semaphore(0)

    def get_claim(self, *, ref: ClaimRef) -> ResourceClaim:
        try:
            return super().get_claim(ref=ref)
        finally:
            self.reads.release()


def share_claim(cluster: MemoryCluster, index: int) -> ClaimRef:
    made = cluster.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"pod-{index}", "namespace": "ns"},
            "spec": {"devices": {"requests": [
                {"name": "npu", "exactly": {"deviceClassName": DRIVER}}
            ]}},
        }
    )  # fmt: skip
    ref = ClaimRef(Namespace("ns"), ClaimName(f"pod-{index}"), made["metadata"]["uid"])
    result = AllocationResult(
        RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(f"npu-0-share-{index}")
    )
    cluster.set_allocation(ref, Allocation((result,), NODE))
    return ref


def test_a_hanging_device_share_query_is_asked_once_and_its_waiters_fail_fast_with_why() -> None:
    """Six pods sharing npu-0 prepare at once while npu-0's question hangs: the hardware is
    asked once, and all six get the reason it gave (the first after its own wait, the others
    from it, none asking again)."""
    cluster, hardware = CountingCluster(), HangingQuery()
    preparer = ClaimPreparer(
        cluster=cluster, cdi=MemoryCdiStore(), checkpoints=MemoryCheckpointStore(),
        inventory=InventoryCache(FakeHardware({"chip": "910B4", "count": 2}, node=NODE)),
        driver=DRIVER, profile=ASCEND_NPU,
        shares=SharingModeService(hardware=hardware, policy=SharingPolicy(shares=8)),
    )  # fmt: skip
    claims = [share_claim(cluster, i) for i in range(PODS)]
    with ThreadPoolExecutor(PODS) as pool:
        first = pool.submit(preparer.prepare, claims[:1])
        assert hardware.entered.wait(30)
        rest = [pool.submit(preparer.prepare, [claim]) for claim in claims[1:]]
        for _ in range(PODS):  # every prepare has read its claim: it is at the chip's question
            assert cluster.reads.acquire(timeout=30)
        hardware.give_up()
        outcomes = [f.result(timeout=60) for f in (first, *rest)]
    errors = [outcome[claim.uid].error for outcome, claim in zip(outcomes, claims, strict=True)]
    assert hardware.asked == ["npu-0"]
    assert all(e is not None and "npu-0" in e and TIMED_OUT in e for e in errors), errors
