"""NodePrepareResources latency and throughput over the real DRA socket, as the kubelet sees it.

The plugin runs in-process on fake hardware, an in-memory cluster and the real file stores in a
temp dir: every prepare writes its CDI spec and is answered only once a checkpoint save holding it
was flushed (one fdatasync of a journal line, shared by the calls running at once). Each round
prepares fresh work (the claims were unprepared after the previous round), so every call takes
the full path: API read, plan, CDI write, checkpoint write. Prepare must never probe the
hardware; the probe's call count is checked to stay put while the clock runs.

Run from the repository root: `python -m benchmarks.prepare_latency`.
"""

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from dependency_injector import providers

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.commands.kubelet_plugin_runtime import KubeletPlugin
from npu_dra.app.container import container_for
from npu_dra.app.options import Hardware, Settings, defaults
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import ClaimName, ClaimUID, Namespace, NodeName
from tests.support.kubelet import Kubelet, allocated_claim  # the kubelet's side; run from the root

NODE = "bench-node"
DRIVER = "npu.huawei.com"
DEVICES = 8
ROUNDS = {1: 150, 8: 40}  # claims per call -> timed calls (each call flushes the checkpoint once)
WARMUP = 10


class CountingProbe:
    """The fake chips, counting how often anyone probes them."""

    def __init__(self, inner: FakeHardware) -> None:
        self._inner = inner
        self.calls = 0

    def probe(self) -> NodeInventory:
        self.calls += 1
        return self._inner.probe()


def _settings(scratch: Path) -> Settings:
    return defaults(
        node_name=NODE,
        driver_name=DRIVER,
        registrar_dir=scratch / "registry",
        plugins_dir=scratch / "plugins",
        cdi_root=scratch / "cdi",
        kubeconfig="",
        hardware=Hardware("fake", scratch / "unused.yaml"),
        log_level="warning",
        cluster="memory",
    )


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _round(dra: Any, group: list[ClaimRef]) -> float:
    """One timed prepare of `group`, then an untimed unprepare to free its devices."""
    begin = time.perf_counter()
    answer = dra.prepare(group)
    elapsed = time.perf_counter() - begin
    if any(answer.claims[ref.uid].error for ref in group):
        raise RuntimeError(f"prepare failed: {answer}")
    dra.unprepare(group)
    return elapsed


def _measure(dra: Any, refs: list[ClaimRef], per_call: int, rounds: int) -> list[float]:
    groups = [refs[i : i + per_call] for i in range(0, len(refs), per_call)]
    for number in range(WARMUP):
        _round(dra, groups[number % len(groups)])
    return [_round(dra, groups[number % len(groups)]) for number in range(rounds)]


def _claims(cluster: Any) -> list[ClaimRef]:
    refs = []
    for index in range(DEVICES):
        meta = cluster.create(allocated_claim(f"bench-{index}", [f"npu-{index}"], pool=NODE))[
            "metadata"
        ]
        refs.append(
            ClaimRef(Namespace(meta["namespace"]), ClaimName(meta["name"]), ClaimUID(meta["uid"]))
        )
    return refs


def _report(dra: Any, refs: list[ClaimRef]) -> None:
    print("NodePrepareResources over the unix socket (v1), real CDI and checkpoint files")
    print(f"  {'claims/call':>11} {'calls':>6} {'p50 ms':>8} {'p99 ms':>8} {'claims/s':>9}")
    for per_call, rounds in ROUNDS.items():
        latencies = _measure(dra, refs, per_call, rounds)
        p50, p99 = _percentile(latencies, 0.5), _percentile(latencies, 0.99)
        rate = per_call * len(latencies) / sum(latencies)
        print(
            f"  {per_call:>11} {len(latencies):>6} {p50 * 1e3:>8.2f} {p99 * 1e3:>8.2f} {rate:>9.0f}"
        )


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="npd-bench-", dir="/tmp"))
    # The counting probe replaces the hardware before anything reads it (build_container would
    # start the first probe at once, on the settings' hardware).
    container = container_for(_settings(scratch))
    probe = CountingProbe(FakeHardware({"chip": "910B4", "count": DEVICES}, node=NodeName(NODE)))
    container.node.hardware.override(providers.Object(probe))
    plugin = KubeletPlugin(container)
    try:
        plugin.start()
        refs = _claims(container.cluster())
        with Kubelet(scratch / "registry").register("v1") as dra:
            probes_at_start = probe.calls
            _report(dra, refs)
        if probe.calls != probes_at_start:
            raise AssertionError(f"prepare probed the hardware {probe.calls - probes_at_start}x")
        print(f"  hardware probes while timing: 0 ({probes_at_start} at start)")
    finally:
        plugin.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
