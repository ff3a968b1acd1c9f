"""vNPUs: what publishing them costs in slices and devices, and what preparing a
claim allocated one costs (plan, record, create-vnpu, CDI) with the in-memory table and with
npu-smi (the fake npu-smi: a Python process per call, so its figures bound the call count, not
real npu-smi's speed).

And 8 claims, one vNPU each on 8 different chips, prepared at once (8 threads calling the
preparer, as the kubelet's pods starting together would) over the fake npu-smi slowed to 200 ms
per call, as real npu-smi is: the wall time of the 8 together and the npu-smi calls per vNPU.
"after" is this code (per-chip locks, one call per create); "serial" is the same code with one
lock around every prepare, the node-wide lock as it was; "before" is what this benchmark
measured on the code before #25 item 6 (commit ee7b93d), printed as the reference. "DCMI" is
the same 8 prepares with vNPUs created and destroyed through the stand-in libdcmi.so, each of
its vNPU calls slowed to the same 200 ms (templates still read from npu-smi, once, at start).

Run from the repository root: `python -m benchmarks.vnpu`.
"""

import contextlib
import functools
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.dcmi.library import load
from npu_dra.adapters.hardware.dcmi.vnpu import DcmiVnpuTable
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
from tests.support.dcmi_stub import StubHost, build_library
from tests.support.dcmi_stub_vnpu import vnpu_offer_from
from tests.support.fake_npu_smi import FakeNpuSmi, load_scenario

NODE = NodeName("bench")
DRIVER = DriverName("npu.huawei.com")
HARDWARE = {"chip": "910B4", "count": 8, "vnpu": "910B4"}
ROUNDS = 30
CHIPS = 8
CALL_DELAY_S = 0.2  # per npu-smi call, about what real npu-smi takes (issue #25)
PARALLEL_ROUNDS = 3
# This benchmark's figures on commit ee7b93d (one state lock held across a vNPU prepare's four
# npu-smi calls), measured on the project's 2-core machine on 2026-11-24:
# prepare min/median/max, calls per create; unprepare min/median/max, calls per destroy (ms).
BEFORE = ((9203, 9452, 9603), 4.0, (4628, 5267, 5304), 2.0)


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
    parallel_main()


def _together(calls: list[Callable[[], None]]) -> float:
    """Run the calls on threads released at once; the wall time until the last returned."""
    start = threading.Barrier(len(calls) + 1)
    threads = [threading.Thread(target=lambda c=c: (start.wait(), c())) for c in calls]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began


class _Counted:
    """The library with its calls counted (what `calls()` returns), as the fake npu-smi counts."""

    def __init__(self, library: object) -> None:
        self._library, self.count = library, 0

    def __getattr__(self, name: str) -> Callable[..., int]:
        function = getattr(self._library, name)

        def counted(*args: object) -> int:
            self.count += 1
            return int(function(*args))

        return counted

    def calls(self) -> range:
        return range(self.count)


def _node(scratch: Path, dcmi: bool) -> tuple[FakeNpuSmi | _Counted, MemoryCluster, ClaimPreparer]:
    """A started node over the fake npu-smi (its survey has listed the chips), or over the
    stand-in libdcmi.so with templates from that npu-smi; then its calls are slowed."""
    fake = FakeNpuSmi(scratch, {**load_scenario("910B4_8npu"), "vnpu": "910B4"})
    hardware, cluster = FakeHardware(HARDWARE, node=NODE), MemoryCluster()
    table: VnpuTable = NpuSmiVnpuTable(npu_smi=fake.path)
    counted: FakeNpuSmi | _Counted = fake
    if dcmi:
        host = StubHost.from_scenario("910B4_8npu", scratch / "dcmi")
        host.vnpu = vnpu_offer_from("910B4")
        host.write()
        counted = _Counted(load(build_library()))
        table = DcmiVnpuTable(dcmi=counted, offers=table)  # type: ignore[arg-type]
    checkpoints = MemoryCheckpointStore()
    preparer = ClaimPreparer(
        cluster=cluster, cdi=MemoryCdiStore(), checkpoints=checkpoints,
        inventory=InventoryCache(VnpuProbe(hardware, table)), driver=DRIVER,
        profile=ASCEND_NPU, vnpus=VnpuService(table=table, checkpoints=checkpoints),
    )  # fmt: skip
    preparer.repair()
    fake.set_delay(CALL_DELAY_S)
    if dcmi:
        host.call_delay_ms = round(CALL_DELAY_S * 1e3)
        host.write()
    return counted, cluster, preparer


def _parallel(serial: bool, dcmi: bool = False) -> tuple[list[float], list[float], float, float]:
    """8 prepares at once, then 8 unprepares, PARALLEL_ROUNDS times: their wall times, and the
    npu-smi (or DCMI) calls per vNPU of each (after the start, whose survey lists the chips)."""
    with tempfile.TemporaryDirectory() as scratch:
        fake, cluster, preparer = _node(Path(scratch), dcmi)
        node: contextlib.AbstractContextManager[object] = (
            threading.Lock() if serial else contextlib.nullcontext()
        )

        def prepare(ref: ClaimRef) -> None:
            with node:
                assert preparer.prepare([ref])[ref.uid].error is None

        def unprepare(ref: ClaimRef) -> None:
            with node:
                assert preparer.unprepare([ref])[ref.uid] is None

        walls: tuple[list[float], list[float]] = ([], [])
        calls = [0, 0]
        for round_ in range(PARALLEL_ROUNDS):
            names = [(f"p{round_}-{i}", f"npu-{i}-vir05-1c-8g-0") for i in range(CHIPS)]
            refs = [_claim(cluster, name, device) for name, device in names]
            for i, step in enumerate((prepare, unprepare)):
                before = len(fake.calls())
                walls[i].append(_together([functools.partial(step, r) for r in refs]))
                calls[i] += len(fake.calls()) - before
        per_vnpu = CHIPS * PARALLEL_ROUNDS
        return walls[0], walls[1], calls[0] / per_vnpu, calls[1] / per_vnpu


def _spread(values: list[float]) -> str:
    ms = [v * 1e3 for v in values]
    return f"min {min(ms):6.0f} ms  median {statistics.median(ms):6.0f} ms  max {max(ms):6.0f} ms"


def parallel_main() -> None:
    (prepare_then, creates_then, unprepare_then, destroys_then) = BEFORE
    print(
        f"{CHIPS} vNPU prepares at once on {CHIPS} chips, npu-smi {CALL_DELAY_S * 1e3:.0f} ms/call"
    )
    print(
        f"  before (ee7b93d, recorded): prepare {_spread([v / 1e3 for v in prepare_then])}; "
        f"{creates_then:.1f} npu-smi calls per create"
    )
    print(
        f"  before (ee7b93d, recorded): unprepare {_spread([v / 1e3 for v in unprepare_then])}; "
        f"{destroys_then:.1f} npu-smi calls per destroy"
    )
    runs = (
        ("serial (one node lock)", False, True),
        ("after (per-chip locks)", False, False),
        ("DCMI (per-chip locks)", True, False),
    )
    medians = {}
    for label, dcmi, serial in runs:
        prepare, unprepare, creates, destroys = _parallel(serial, dcmi=dcmi)
        calls = "DCMI" if dcmi else "npu-smi"
        print(f"  {label}: prepare {_spread(prepare)}; {creates:.1f} {calls} calls per create")
        print(
            f"  {label}: unprepare {_spread(unprepare)}; {destroys:.1f} {calls} calls per destroy"
        )
        medians[label.split()[0]] = (statistics.median(prepare), statistics.median(unprepare))
    for label in ("after", "DCMI"):
        prepare_s, unprepare_s = medians[label]
        print(
            f"  {label} vs before: prepare median {prepare_then[1] / (prepare_s * 1e3):.1f}x "
            f"faster, unprepare median {unprepare_then[1] / (unprepare_s * 1e3):.1f}x faster"
        )


if __name__ == "__main__":
    main()
