"""`npu-dra simulate` beside the real kube-scheduler v1.34.3, on the same generated cluster.

For each size (SIMULATE_VS_SCHEDULER_SIZES, default "50,500" nodes) one scenario is generated as
`--generate nodes=N,npus=8,pods=2N` makes it (identical 8-NPU 910B4 nodes; pods take one NPU, or
two on one NUMA node, in turn). Each round (NPU_DRA_BENCH_ROUNDS, default 3):

* simulate: `benchmarks.simulate.run_once`, the wall time of publishing the pools, creating the
  claims and every pod's scheduling cycle and allocation (generation and wiring untimed).
* kube-scheduler: a fresh control plane (tests/support/controlplane.py: etcd, kube-apiserver,
  kube-controller-manager, whose resourceclaim controller makes each pod's claim, and
  kube-scheduler; default feature gates). Untimed, the Nodes (Ready, allocatable set), the
  ResourceSlices npu-dra publishes for them (those simulate's `-o json` lists), the DeviceClass and
  the templates are written as tests/e2e/test_simulate_vs_scheduler.py writes them (8 writers at
  once). Then 8 client threads (SIMULATE_VS_SCHEDULER_CREATORS) create the pods, issued in file
  order; timed from the first create to the last pod seen bound (a watch on the namespace).

The controller-manager's and scheduler's client rate limit is raised to 5000 QPS, as
scheduler_perf raises it (util.go), so that the scheduler is measured, not a token bucket; at
their defaults (SIMULATE_VS_SCHEDULER_QPS=0) the controller-manager's 20 QPS caps the pipeline
near 10 pods/s (two writes per pod). pods/s is pods bound / wall time; the table gives
min/median/max over the rounds and the ratio of the medians (simulate / kube-scheduler). The
two never run at the same time, but share this machine's cores with whatever else runs.

Every decision is compared as the differential e2e test compares it (its `_agrees`): placed or
pending; the node where simulate says exactly one fits; the devices where the node is the same
(simulate's choice or another it lists) until the two clusters' states part, then placed or
pending (the scheduler picks among equally scored nodes at random, so they part early on identical
nodes; the table counts the pods that matched in full). A disagreement is printed and fails the
run (exit status 1); no timing is asserted.

Reference: kube-scheduler's own scheduler_perf DRA workloads at 500 nodes
(k8s.io/kubernetes@v1.34.3 test/integration/scheduler_perf/dra/performance-config.yaml) have
thresholds of 40 to 70 pods/s: 40 for SchedulingWithResourceClaimTemplate/5000pods_500nodes
("typically above 51"), 56 with queueing hints ("above 70"), 60 to 70 for
SteadyStateClusterResourceClaimTemplate/{empty,half,full}_500nodes ("typically above" 75 to 81).
An offline tool should stay >= 10x faster than that.

Run from the repository root: `python -m benchmarks.simulate_vs_scheduler`.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client
from kubernetes.watch.watch import iter_resp_lines

from benchmarks.simulate import run_once
from npu_dra.adapters.simulation_files.generate import DRIVER, documents
from tests.e2e.test_simulate_vs_scheduler import _agrees, _api_object, _set_up, _simulate
from tests.support.controlplane import ControlPlane, build_binaries

SIZES = os.environ.get("SIMULATE_VS_SCHEDULER_SIZES", "50,500")
ROUNDS = max(1, int(os.environ.get("NPU_DRA_BENCH_ROUNDS", "3")))
NPUS = 8
PODS_PER_NODE = 2
NAMESPACE = "load"  # the generated pods' and templates' namespace
WRITERS = 8  # concurrent set-up writers (nodes and slices); the apiserver shares the 2 cores
CREATORS = int(os.environ.get("SIMULATE_VS_SCHEDULER_CREATORS", "8"))  # pods created at once
# The client rate limit of the controller-manager and the scheduler, as scheduler_perf sets it
# (util.go: QPS and burst 5000); "0" keeps their defaults (controller-manager 20 QPS, burst 30).
QPS = int(os.environ.get("SIMULATE_VS_SCHEDULER_QPS", "5000"))
CLIENT_ARGS = [f"--kube-api-qps={QPS}", f"--kube-api-burst={QPS}"] if QPS else []
COMPONENT_ARGS = {"kube-controller-manager": CLIENT_ARGS, "kube-scheduler": CLIENT_ARGS}


@dataclass
class Size:
    """One cluster size: its documents, simulate's decisions, and each round's figures."""

    nodes: int
    docs: list[dict[str, Any]]
    simulated: dict[str, Any]
    scheduler: list[float] = field(default_factory=list)
    simulate: list[float] = field(default_factory=list)
    agreeing: int = 0
    compared: int = 0
    same: int = 0  # of those agreeing, on the same node and devices as simulate's first choice
    disagreements: list[tuple[str, Any, Any]] = field(default_factory=list)

    @property
    def pods(self) -> list[dict[str, Any]]:
        return [d for d in self.docs if d["kind"] == "Pod"]


def _size(nodes: int, scratch: Path) -> Size:
    docs = documents(nodes=nodes, npus=NPUS, pods=nodes * PODS_PER_NODE, driver=DRIVER)
    scratch.mkdir(parents=True, exist_ok=True)
    simulated = _simulate(
        yaml.safe_dump_all(docs), scratch, DRIVER, ("--kubernetes-version", "1.34")
    )
    return Size(nodes, docs, simulated)


def _populate(plane: ControlPlane, size: Size) -> None:
    """Nodes, their slices, the class and the templates, as the e2e test writes them."""
    nodes = [d for d in size.docs if d["kind"] == "SimulatedNode"]
    rest = [d for d in size.docs if d["kind"] in ("DeviceClass", "ResourceClaimTemplate")]
    slices = size.simulated["resourceSlices"]
    _set_up(plane, rest, [])  # the namespace
    with ThreadPoolExecutor(WRITERS) as pool:
        done = pool.map(
            lambda i: _set_up(plane, nodes[i::WRITERS], slices[i::WRITERS]), range(WRITERS)
        )
        list(done)
    for doc in rest:
        plane.kubectl("create", "-f", "-", input=json.dumps(_api_object(doc)))


def _bound_at(plane: ControlPlane, count: int, timeout: int) -> dict[str, float]:
    """When each pod in NAMESPACE was first seen with a node, until `count` are (or `timeout`).
    A watch the API server closes (a watcher it finds too slow) is resumed where it stopped."""
    core: Any = client.CoreV1Api(plane.api_client)
    bound: dict[str, float] = {}
    deadline, version = time.monotonic() + timeout, ""
    while len(bound) < count and (left := int(deadline - time.monotonic())) > 0:
        version = _watch(core, bound, count, version, left)
    return bound


def _watch(core: Any, bound: dict[str, float], count: int, version: str, timeout: int) -> str:
    """One watch from `version` ("": from the pods there are, each listed first, so none is
    missed); returns the last resourceVersion seen, or "" where the watch must start afresh."""
    response = core.list_namespaced_pod(
        NAMESPACE,
        watch=True,
        resource_version=version or None,
        timeout_seconds=timeout,
        _preload_content=False,
    )
    try:
        for line in iter_resp_lines(response):  # type: ignore[no-untyped-call]
            event = json.loads(line)
            if event["type"] == "ERROR":  # e.g. 410 Gone: that version is compacted away
                return ""
            pod, version = event["object"], event["object"]["metadata"]["resourceVersion"]
            if pod["spec"].get("nodeName"):
                bound.setdefault(pod["metadata"]["name"], time.perf_counter())
            if len(bound) == count:
                break
    finally:
        response.close()
    return version


def _schedule(plane: ControlPlane, pods: list[dict[str, Any]]) -> tuple[float, float, int]:
    """(seconds from the first pod created to the last bound, to the last created, pods bound)."""
    core: Any = client.CoreV1Api(plane.api_client)

    def create(doc: dict[str, Any]) -> None:
        core.create_namespaced_pod(NAMESPACE, _api_object(doc), _preload_content=False)

    with ThreadPoolExecutor(1) as watcher, ThreadPoolExecutor(CREATORS) as creators:
        watch = watcher.submit(_bound_at, plane, len(pods), 60 + len(pods) // 5)
        started = time.perf_counter()
        list(creators.map(create, pods))
        created = time.perf_counter() - started
        bound = watch.result()
    return max(bound.values(), default=started) - started, created, len(bound)


def _compare(plane: ControlPlane, size: Size) -> None:
    """Every pod's decision against simulate's, in file order, as the e2e test compares them."""
    core: Any = client.CoreV1Api(plane.api_client)
    listed = core.list_namespaced_pod(NAMESPACE, _preload_content=False)
    real = {p["metadata"]["name"]: p for p in json.loads(listed.data)["items"]}
    diverged = False
    for want in size.simulated["pods"]:
        pod = real[want["pod"].split("/", 1)[1]]
        agrees, same_state = _agrees(plane, want, pod, diverged=diverged)
        size.compared += 1
        if agrees:
            size.agreeing += 1
            size.same += same_state
        else:
            size.disagreements.append((want["pod"], want["node"], pod["spec"].get("nodeName")))
        diverged = diverged or not same_state


def _round(bin_dir: Path, size: Size, scratch: Path) -> None:
    count = len(size.pods)
    _, _, wall, bound = run_once(size.nodes, count)
    size.simulate.append(bound / wall)
    began = time.perf_counter()
    with ControlPlane(bin_dir, scratch, component_args=COMPONENT_ARGS) as plane:
        _populate(plane, size)
        ready = time.perf_counter() - began
        elapsed, created, placed = _schedule(plane, size.pods)
        size.scheduler.append(placed / elapsed if elapsed else 0.0)
        _compare(plane, size)
    print(
        f"  {size.nodes} nodes: plane + set-up {ready:.0f} s; kube-scheduler {placed}/{count}"
        f" bound in {elapsed:.1f} s (all created by {created:.1f} s);"
        f" simulate {bound} in {wall:.2f} s",
        file=sys.stderr,
    )


def _spread(values: list[float]) -> str:
    return f"{min(values):6.0f} {statistics.median(values):6.0f} {max(values):6.0f}"


def _table(sizes: list[Size]) -> None:
    limit = f"client QPS {QPS}" if QPS else "default client QPS"
    print(f"kube-scheduler v1.34.3 ({limit}) vs npu-dra simulate, pods/s over {ROUNDS} round(s)")
    heads = ("kube-sched min/med/max", "simulate min/med/max", "ratio")
    print(f"{'nodes':>6} {'pods':>6}  {heads[0]:>22}  {heads[1]:>22}  {heads[2]:>6}", end="")
    print("  decisions agreeing (same node+devices)")
    for size in sizes:
        ratio = statistics.median(size.simulate) / statistics.median(size.scheduler)
        agreeing = f"{size.agreeing}/{size.compared} ({size.same})"
        print(
            f"{size.nodes:>6} {len(size.pods):>6}  {_spread(size.scheduler):>22}"
            f"  {_spread(size.simulate):>22}  {ratio:>5.0f}x  {agreeing}"
        )


def main() -> None:
    bin_dir = build_binaries(lambda line: print(f"[k8s build] {line}", file=sys.stderr))
    if isinstance(bin_dir, str):
        raise RuntimeError(bin_dir)
    sizes = []
    with tempfile.TemporaryDirectory(prefix="npd-bench-", dir="/tmp") as scratch:
        for nodes in (int(n) for n in SIZES.split(",") if n):
            size = _size(nodes, Path(scratch) / f"simulate-{nodes}")
            for number in range(ROUNDS):
                _round(bin_dir, size, Path(scratch) / f"plane-{nodes}-{number}")
            sizes.append(size)
    _table(sizes)
    wrong = [d for size in sizes for d in size.disagreements]
    for pod, simulated, scheduled in wrong[:20]:
        print(f"DISAGREES: {pod}: simulate {simulated}, kube-scheduler {scheduled}")
    if wrong:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
