"""The plugin process under faults, against a real Kubernetes v1.34.3 API server reached through
the fault suite's toxic proxy (tests/faults), with a token bound to its stand-in pod.

* Restart during an API outage: process start to both sockets serving (registration GetInfo
  answered and a checkpointed claim's NodePrepareResources answered).
* During the outage: NodePrepareResources p50/p99 of an already-prepared claim, and
  NodeUnprepareResources of checkpointed claims; how long a new claim waits for its error
  (the default --claim-fetch-timeout, 20 s).
* The API server comes back: time until the node's slices (deleted during the outage) are
  published again.
* One NodePrepareResources call of 1000 claims (API healthy).
* kill -9 at NPU_DRA_BENCH_KILLS (default 200) random points of prepare/unprepare storms: lost
  claims, double-prepared NPUs, orphan CDI specs, temp files, unreadable checkpoints.

Run from the repository root: `python -m benchmarks.faults` (NPU_DRA_BENCH_FAULTS=outage,storm
runs only those parts; the parts are outage, thousand and storm).
"""

import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from tests.e2e.seed_cluster import access_applied
from tests.faults.harness import FaultNode, create_claims, fault_node
from tests.faults.storm import storm
from tests.support.controlplane import ControlPlane, build_binaries, wait_for
from tests.support.kubelet import wait_for_registration_socket

RESTARTS = 5
ROUNDS = 200
KILLS = int(os.environ.get("NPU_DRA_BENCH_KILLS", "200"))
PARTS = os.environ.get("NPU_DRA_BENCH_FAULTS", "outage,thousand,storm").split(",")


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _ms(samples: list[float]) -> str:
    return (
        f"p50 {_percentile(samples, 0.5) * 1e3:.1f} ms, p99 {_percentile(samples, 0.99) * 1e3:.1f} "
        f"ms, max {max(samples) * 1e3:.1f} ms ({len(samples)} calls)"
    )


def _serving_s(node: FaultNode, claim: object) -> float:
    """Process start to registration answered and a checkpointed claim prepared."""
    assert node.plugin is not None
    node.plugin.kill()
    began = time.perf_counter()
    node.start()
    wait_for_registration_socket(node.host.registry, 30)
    with node.kubelet() as dra:
        answer = dra.prepare([claim], timeout=10)
        elapsed = time.perf_counter() - began
    if any(a.error for a in answer.claims.values()):
        raise RuntimeError(f"idempotent prepare failed: {answer}")
    return elapsed


def _outage(plane: ControlPlane) -> None:
    with fault_node(plane, "bench-outage") as node:
        node.fetch_timeout_s = 20.0  # the flag's default
        claims = create_claims(node, [[f"npu-{i}"] for i in range(8)])
        fresh = create_claims(node, [["npu-0"]], prefix="fresh")
        node.start()
        with node.kubelet() as dra:
            dra.prepare(claims, timeout=30)
        wait_for(lambda: len(node.slices()) == 1, timeout=30, what="the pool published")
        with node.proxy.outage():
            node.delete_slices()
            starts = [_serving_s(node, claims[0]) for _ in range(RESTARTS)]
            prepares, unprepares = [], []
            with node.kubelet() as dra:
                for number in range(ROUNDS):
                    claim = claims[number % 4]
                    began = time.perf_counter()
                    dra.prepare([claim], timeout=10)
                    prepares.append(time.perf_counter() - began)
                for claim in claims[4:]:
                    began = time.perf_counter()
                    dra.unprepare([claim], timeout=10)
                    unprepares.append(time.perf_counter() - began)
                began = time.perf_counter()
                refused = dra.prepare(fresh, timeout=45)
                refused_s = time.perf_counter() - began
        came_back = time.perf_counter()
        wait_for(lambda: len(node.slices()) == 1, timeout=60, what="the pool", interval=0.02)
        republished = time.perf_counter() - came_back
    (error,) = [a.error for a in refused.claims.values()]
    print(
        "restart during an API outage -> both sockets serving: "
        + ", ".join(f"{s:.2f}s" for s in starts)
        + f" (median {statistics.median(starts):.2f}s)"
    )
    print(f"during the outage, NodePrepareResources of an already-prepared claim: {_ms(prepares)}")
    print(f"during the outage, NodeUnprepareResources of a checkpointed claim: {_ms(unprepares)}")
    print(f"during the outage, a new claim gets its error after {refused_s:.1f}s: {error[:90]}...")
    print(f"API server back -> node's slices republished: {republished:.2f}s")


def _thousand(plane: ControlPlane) -> None:
    with fault_node(plane, "bench-1000") as node:
        claims = create_claims(node, [[f"npu-{i % 8}"] for i in range(1000)], workers=16)
        node.start()
        with node.kubelet() as dra:
            began = time.perf_counter()
            answer = dra.prepare(claims, timeout=45)
            elapsed = time.perf_counter() - began
    prepared = sum(not a.error for a in answer.claims.values())
    print(
        f"one NodePrepareResources call of 1000 claims (8 NPUs: {prepared} prepared, the rest "
        f"refused as held; every claim read from the API): {elapsed:.2f}s"
    )


def _kill_storm(plane: ControlPlane) -> None:
    with fault_node(plane, "bench-storm") as node:
        claims = create_claims(node, [[f"npu-{i % 8}"] for i in range(16)])
        began = time.perf_counter()
        report = storm(node, claims, kills=KILLS, seed=1122)
        elapsed = time.perf_counter() - began
    totals = ", ".join(f"{count} {what}" for what, count in sorted(report.totals.items()))
    print(
        f"kill -9 at {report.kills} random points of prepare/unprepare storms "
        f"({report.calls} calls completed, {elapsed:.0f}s): {totals}"
    )
    for problem in report.problems[:5]:
        print(f"  {problem}")


@contextlib.contextmanager
def _plane() -> Iterator[ControlPlane]:
    bin_dir = build_binaries(lambda line: print(f"[k8s build] {line}", file=sys.stderr))
    if isinstance(bin_dir, str):
        raise RuntimeError(bin_dir)
    with (
        tempfile.TemporaryDirectory(prefix="npd-bench-", dir="/tmp") as scratch,
        ControlPlane(bin_dir, Path(scratch) / "plane") as plane,
        access_applied(plane),
    ):
        yield plane


def main() -> None:
    parts = {"outage": _outage, "thousand": _thousand, "storm": _kill_storm}
    with _plane() as plane:
        for name in PARTS:
            parts[name](plane)


if __name__ == "__main__":
    main()
