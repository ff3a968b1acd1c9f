"""vNPUs: what publishing them costs in slices and devices, and what preparing a
claim allocated one costs (plan, record, create-vnpu, CDI) with the in-memory table and with
npu-smi (the fake npu-smi: a Python process per call, so its figures bound the call count, not
real npu-smi's speed).

Run from the repository root: `python -m benchmarks.vnpu`.
"""

import statistics
import tempfile
import time
from pathlib import Path

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.adapters.hardware.vnpu_probe import VnpuProbe
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.vnpu import VnpuService
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef
from npu_dra.domain.ids import (
    ClaimName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.pool import desired_slices
from npu_dra.domain.ports import VnpuTable
from npu_dra.domain.profile import ASCEND_NPU
from tests.support.fake_npu_smi import FakeNpuSmi, load_scenario

NODE = NodeName("bench")
DRIVER = DriverName("npu.huawei.com")
HARDWARE = {"chip": "910B4", "count": 8, "vnpu": "910B4"}
ROUNDS = 30


def _claim(cluster: MemoryCluster, name: str, device: str) -> ClaimRef:
    created = cluster.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": "n"}}]}
            },
        }
    )
    ref = ClaimRef(Namespace("default"), ClaimName(name), created["metadata"]["uid"])
    result = AllocationResult(RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(device))
    cluster.set_allocation(ref, Allocation((result,), NODE))
    return ref


def _latency(
    table: VnpuTable, hardware: FakeHardware, rounds: int
) -> tuple[list[float], list[float]]:
    cluster, checkpoints = MemoryCluster(), MemoryCheckpointStore()
    preparer = ClaimPreparer(
        cluster=cluster,
        cdi=MemoryCdiStore(),
        checkpoints=checkpoints,
        inventory=InventoryCache(VnpuProbe(hardware, table)),
        driver=DRIVER,
        profile=ASCEND_NPU,
        vnpus=VnpuService(table=table, checkpoints=checkpoints),
    )
    prepare, unprepare = [], []
    for i in range(rounds):
        ref = _claim(cluster, f"c{i}", f"npu-{i % 8}-vir05-1c-8g-0")
        start = time.perf_counter()
        assert preparer.prepare([ref])[ref.uid].error is None
        prepare.append(time.perf_counter() - start)
        start = time.perf_counter()
        assert preparer.unprepare([ref])[ref.uid] is None
        unprepare.append(time.perf_counter() - start)
    return prepare, unprepare


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    return f"p50 {statistics.median(ordered) * 1e3:7.2f} ms  p90 {p90 * 1e3:7.2f} ms"


def main() -> None:
    hardware = FakeHardware(HARDWARE, node=NODE)
    table = hardware.vnpu_table()
    assert table is not None
    inventory = VnpuProbe(hardware, table).probe()
    slices = desired_slices(inventory, driver=DRIVER, generation=1)
    devices = sum(len(s.devices) for s in slices)
    counters = sum(len(c.counters) for s in slices for c in s.shared_counters)
    print(f"8 x 910B4 with vNPUs: {len(slices)} slices, {devices} devices, {counters} counters")
    prepare, unprepare = _latency(table, hardware, ROUNDS)
    print(f"vNPU prepare, in-memory table:    {_ms(prepare)}")
    print(f"vNPU unprepare, in-memory table:  {_ms(unprepare)}")
    with tempfile.TemporaryDirectory() as scratch:
        fake = FakeNpuSmi(Path(scratch), {**load_scenario("910B4_8npu"), "vnpu": "910B4"})
        smi = NpuSmiVnpuTable(npu_smi=fake.path)
        before = len(fake.calls())
        prepare, unprepare = _latency(smi, hardware, ROUNDS // 3)
        calls = (len(fake.calls()) - before) / (ROUNDS // 3)
        print(f"vNPU prepare, fake npu-smi:       {_ms(prepare)}")
        print(f"vNPU unprepare, fake npu-smi:     {_ms(unprepare)}")
        print(f"npu-smi calls per prepare+unprepare (after start): {calls:.1f}")


if __name__ == "__main__":
    main()
