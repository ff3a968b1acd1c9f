"""Pod start on a real node, side by side: pod creation -> Running on kubelet v1.34.3 +
containerd 2.1 + runc (tests/support/node.py), with a fake Ascend host (real device nodes, the
recorded 8 x 910B4 npu-smi) and the plugins as host processes registered with that kubelet.

* npu-dra vs Go: npu-dra's DRA plugin (deploy/manifests' DaemonSet flags plus --claim-prefetch,
  with the pod reads the chart's claimPrefetch grants) and Kubernetes' DRA
  test driver (k8s.io/kubernetes/test/e2e/dra/test-driver v1.34.3, built by
  tests/e2e/k8s/build-test-driver.sh) registered on the same kubelet at the same time, 8 devices
  each, each with its DeviceClass (`device.driver == ...`) and a ResourceClaimTemplate asking for
  one device. Every pod is the same busybox pod with one claim from its driver's template: the
  scheduler allocates, the kubelet prepares through the plugin, containerd applies its CDI spec.
* vNPU: npu-dra with `--vnpu=templates` over the Python fake npu-smi, a claim for one
  vir05_1c_8g vNPU (made by npu-smi at prepare, destroyed at unprepare). The partitionable
  devices need DRAPartitionableDevices, alpha and off in v1.34.3: these run on a second v1.34.3
  node whose control plane turns it on (same kubelet, containerd and runc). No Go counterpart.
* classic: the device plugin, a pod asking `huawei.com/Ascend910: 1` (the kubelet's device
  manager calls GetPreferredAllocation and Allocate). No Go counterpart.

Each round: POD_START_PODS (default 20) pods per contender one at a time, alternating npu-dra and
Go (the leader swaps every pair), each deleted with its claim (untimed) before the next; then a
burst of 4 pods created back to back per contender, POD_START_BURSTS (default 10) bursts each,
alternating as above. A pod's time runs from just before its create
call to the instant a pod watch (its own client, in a thread) first shows it Running, both
time.perf_counter. Per round the p50 and p95 of its pods; the table prints min/median/max over
NPU_DRA_BENCH_ROUNDS (default 3) rounds and the ratio of the medians npu-dra / Go (< 1: npu-dra
faster). One untimed warm-up pod per contender first.

Most of creation -> Running is the kubelet's own loops, the same for every driver: its volume
manager's 300 ms wait poll and the generic PLEG's 1 s relist, which must see the container
running before the pod may turn Running (so times cluster near 1 s and 2 s). The rows "kubelet
DRA step" show the part a DRA driver is in, from the node's logs (benchmarks/_pod_start_spans.py):
the kubelet taking up the claim -> containerd asked for the pod's sandbox, which holds the
kubelet's claim read, the NodePrepareResources call and the driver's whole prepare.

Run from the repository root: `python -m benchmarks.pod_start` (the first run builds the node and
the test driver).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from benchmarks._pod_start_clock import NAMESPACE, Contender, PodClock, pod, pod_clock
from benchmarks._pod_start_drivers import (
    CLAIM_OBJECTS,
    CLASSIC_RESOURCE,
    GO_TEMPLATE,
    NPU_TEMPLATE,
    VNPU,
    VNPU_TEMPLATE,
    go_test_driver_binary,
    start_classic,
    start_go_driver,
    start_npu_dra,
    vnpu_plugin,
)
from benchmarks._pod_start_spans import PrepareSpans
from benchmarks._pod_start_table import BURST, ONE, STEP, Table
from benchmarks._real_node import logs_kept_on_failure, real_node
from tests.e2e.real_node.cluster import RealCluster, real_cluster_session

ROUNDS = max(1, int(os.environ.get("NPU_DRA_BENCH_ROUNDS", "3")))
PODS = max(1, int(os.environ.get("POD_START_PODS", "20")))
BURST_PODS = 4
BURSTS = max(1, int(os.environ.get("POD_START_BURSTS", "10")))
GATES = {"DRAPartitionableDevices": True}
NPU = Contender("npu-dra", "npu", partial(pod, template=NPU_TEMPLATE))
GO = Contender("Go", "go", partial(pod, template=GO_TEMPLATE))
VNPU_POD = Contender("npu-dra vNPU", "vnpu", partial(pod, template=VNPU_TEMPLATE))
CLASSIC = Contender("classic", "classic", partial(pod, limits={CLASSIC_RESOURCE: "1"}))


@dataclass
class Bench:
    """Times pods (PodClock) and their kubelet DRA step (PrepareSpans) into the table."""

    clock: PodClock
    spans: PrepareSpans
    table: Table = field(default_factory=Table)

    def timed(self, contender: Contender, names: list[str]) -> tuple[list[float], list[float]]:
        times = self.clock.time_to_running([contender.manifest(n) for n in names])
        return times, self.spans.of(names)

    def one_at_a_time(self, contenders: Sequence[Contender], number: int) -> None:
        """PODS pods per contender, alternating (the leader swaps every pair)."""
        samples: dict[str, tuple[list[float], list[float]]] = {
            c.label: ([], []) for c in contenders
        }
        for n in range(PODS):
            for c in contenders if (n + number) % 2 == 0 else contenders[::-1]:
                times, spans = self.timed(c, [f"{c.prefix}-r{number}-{n}"])
                samples[c.label][0].extend(times)
                samples[c.label][1].extend(spans)
        for label, (times, spans) in samples.items():
            self.table.add(ONE, label, times)
            self.table.add(f"{STEP}, {ONE}", label, spans)

    def bursts(self, contenders: Sequence[Contender], number: int) -> None:
        """BURSTS bursts of BURST_PODS pods per contender, alternating (the leader swaps every
        pair), so that each contender's bursts meet the same node."""
        samples: dict[str, tuple[list[float], list[float]]] = {
            c.label: ([], []) for c in contenders
        }
        for b in range(BURSTS):
            for c in contenders if (b + number) % 2 == 0 else contenders[::-1]:
                names = [f"{c.prefix}-r{number}-burst{b}-{i}" for i in range(BURST_PODS)]
                times, spans = self.timed(c, names)
                samples[c.label][0].extend(times)
                samples[c.label][1].extend(spans)
        for label, (times, spans) in samples.items():
            self.table.add(BURST, label, times)
            self.table.add(f"{STEP}, {BURST}", label, spans)


def _measure(cluster: RealCluster, contenders: Sequence[Contender]) -> Table:
    """A warm-up pod each, then ROUNDS rounds: one at a time, then a burst each."""
    logs = cluster.node.log_dir
    spans = PrepareSpans(logs / "kubelet.log", logs / "containerd.log")
    with pod_clock(
        cluster.plane.kubeconfig, partial(cluster.diagnose, namespace=NAMESPACE)
    ) as clock:
        bench = Bench(clock, spans)
        for c in contenders:
            bench.timed(c, [f"{c.prefix}-warm-up"])
        for number in range(ROUNDS):
            bench.one_at_a_time(contenders, number)
            bench.bursts(contenders, number)
        return bench.table


def _default_node(go_binary: Path, tables: dict[str, Table]) -> tuple[Path, Path, Path] | None:
    """npu-dra and Go side by side, then the classic device plugin; the node's binaries."""
    with real_node("bench-node-") as found:
        if found is None:
            return None
        cluster, _ = found
        cluster.apply(CLAIM_OBJECTS)
        plugins = [start_npu_dra(cluster), start_go_driver(cluster, go_binary)]
        tables["side by side"] = _measure(cluster, [NPU, GO])
        for plugin in plugins:
            plugin.stop()
        start_classic(cluster)
        tables["classic"] = _measure(cluster, [CLASSIC])
        return cluster.node.k8s_bin, cluster.node.node_bin, cluster.node.images_dir


def _gated_node(binaries: tuple[Path, Path, Path], tables: dict[str, Table]) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="bench-vnpu-node-") as work,
        real_cluster_session(*binaries, Path(work), feature_gates=GATES) as cluster,
        logs_kept_on_failure(cluster),
        vnpu_plugin(cluster, Path(work)),
    ):
        cluster.apply(CLAIM_OBJECTS)
        tables["vNPU"] = _measure(cluster, [VNPU_POD])


def _print(tables: dict[str, Table]) -> None:
    print(
        "pod creation -> Running on a real node (kubelet v1.34.3, containerd 2.1.5, runc): "
        f"{ROUNDS} rounds, {PODS} pods one at a time + {BURSTS} x {BURST_PODS} at once per "
        "contender and round"
    )
    if "side by side" in tables:
        print(
            "npu-dra vs Kubernetes' DRA test driver (Go), both on the same kubelet, 8 devices each"
        )
        tables["side by side"].print([NPU.label, GO.label])
    if "vNPU" in tables:
        print(f"vNPU pods on npu-dra ({VNPU}; DRAPartitionableDevices on; fake npu-smi in Python)")
        tables["vNPU"].print([VNPU_POD.label])
    if "classic" in tables:
        print(f"classic device plugin ({CLASSIC_RESOURCE}: 1)")
        tables["classic"].print([CLASSIC.label])


def main() -> None:
    go_binary = go_test_driver_binary()
    tables: dict[str, Table] = {}
    try:
        binaries = _default_node(go_binary, tables)
        if binaries is not None:
            _gated_node(binaries, tables)
    finally:
        _print(tables)


if __name__ == "__main__":
    main()
