"""npu-dra's kubelet plugin beside Kubernetes' own DRA test driver (Go, on the kubeletplugin
helper: k8s.io/kubernetes/test/e2e/dra/test-driver, built once by
tests/e2e/k8s/build-test-driver.sh into the control plane's cache), on one real v1.34.3 control
plane, 8 devices each, interleaved: every round starts both and runs each phase for one, then the
other (the order alternates by round). Each figure is one sample per round; the table prints
min/median/max over the rounds and the ratio of the medians (npu-dra / Go: < 1 is npu-dra better,
except for prepares/s).

* start -> slices visible: process start to its 8 devices listed in ResourceSlices (10 ms poll);
  CPU until visible: the process's own user+system CPU at that moment (/proc/<pid>/stat; npu-dra's
  fake npu-smi child is not counted).
* prepare / unprepare p50/p99 over the DRA socket (v1, tests/support/kubelet.py), the plugin
  reading each claim from the API server: 1 claim per call, then 8 claims per call; each prepare
  is followed by its unprepare. The claims exist allocated to the plugin's devices, as the
  scheduler leaves them.
* the same prepare p50/p99 with the pod bound first (benchmarks/_bound_pods.py): each claim is
  generated for a pod, reserved for it and allocated, the pod is bound to the plugin's node and
  the claim read once, as the kubelet does before it calls the plugin, then the timed prepare.
  npu-dra runs with --claim-prefetch: its watch of the node's pods reads the claim at the
  binding, so the prepare pays no API read. In the rows above no pod names the claims, so
  npu-dra reads each claim at prepare, exactly as with the prefetch off (docs/operating.md "Claim
  prefetch"). The Go driver reads the claim at prepare in both. The floor has no such rows.
* prepares/s with 8 concurrent callers, one claim each, prepare + unprepare in a loop.
* CPU per call: plugin CPU per prepare+unprepare pair over the 1-claim phase.
* RSS after start, and after 1000 prepares (topped up with 1-claim prepares), from
  /proc/<pid>/status; threads after the prepares.
* idle CPU: both plugins registered and idle side by side (npu-dra re-probing its hardware every
  10 s, its default); ms of CPU per 60 s, measured over NPU_DRA_BENCH_IDLE_S (default 60 s) per
  round from /proc/<pid>/task/*/schedstat (nanoseconds on a CPU, not the 10 ms accounting tick).
* Allocate p50/p99 of npu-dra's classic device plugin (1 device per call, tests/support/
  kubelet_dp.py); the Go test driver has no classic counterpart.

npu-dra runs twice per round: with one-instance socket names and npu-smi, and in the chart's
default configuration ("deployed": `--hardware auto`, the liveness port, `--seamless-upgrade auto`
with a pod UID, so per-pod sockets on this 1.34 Node, where each state step also takes the lock
two instances share, and the DaemonSet watched: _contenders.deployed_flags); each has its ratio
to Go. Its start and idle rows are the deployed plugin's start and idle (issue 49).

A last column, py-gRPC floor, runs the same phases against benchmarks/_grpc_floor.py: grpcio
serving canned answers (no API read, no disk), the least any plugin on grpcio can cost; its
distance to Go is the library's, the rest of npu-dra's is npu-dra's own.

The Go driver's client rate limit is raised (see _contenders.GO_QPS) so that the plugins' work is
compared, not client-go's token bucket. NPU_DRA_BENCH_SCALE (default 1) scales the calls and
seconds of every phase, NPU_DRA_BENCH_ROUNDS (default 3) the rounds.

Run from the repository root: `python -m benchmarks.vs_go`.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from kubernetes import client

from benchmarks._bound_pods import bind_and_read, remove_all, stage
from benchmarks._contenders import (
    DEVICES,
    GO_BURST,
    GO_QPS,
    PER_POD,
    Running,
    go_test_driver,
    grpc_floor,
    npu_dra,
)
from benchmarks._procstat import cpu_s, rss_mib, run_since, thread_run_ns, threads
from tests.e2e.plugin_process import fake_node, spawn_plugin
from tests.support.controlplane import ControlPlane, build_binaries, wait_for
from tests.support.kubelet import DraClient, Kubelet, WireClaim, allocated_claim
from tests.support.kubelet_dp import FakeKubelet

SCALE = float(os.environ.get("NPU_DRA_BENCH_SCALE", "1"))
ROUNDS = max(1, int(os.environ.get("NPU_DRA_BENCH_ROUNDS", "3")))
CALLS_1 = max(10, int(150 * SCALE))
CALLS_8 = max(5, int(30 * SCALE))
WARMUP = 5
CALLERS = 8
THROUGHPUT_S = max(1.0, 4.0 * SCALE)
PREPARES_FOR_RSS = max(1, int(1000 * SCALE))
IDLE_S = float(os.environ.get("NPU_DRA_BENCH_IDLE_S", str(max(5.0, 60.0 * SCALE))))
ALLOCATE_CALLS = max(10, int(200 * SCALE))
NAMESPACE = "vs-go"
TEST_DRIVER_SCRIPT = Path(__file__).parent.parent / "tests/e2e/k8s/build-test-driver.sh"
LABELS = ("npu-dra", "Go")
FLOOR = "floor"  # benchmarks/_grpc_floor.py: grpcio answering canned replies, a column of its own


@dataclass
class Session:
    """One started plugin, registered with a kubelet-side client, its claims in the API."""

    plugin: Running
    dra: DraClient
    claims: list[WireClaim]
    node: str = ""  # where its pods are bound; none for the floor
    prepares: int = 0


@dataclass
class Table:
    """metric -> contender -> one sample per round."""

    rows: dict[str, dict[str, list[float]]] = field(default_factory=lambda: defaultdict(dict))
    units: dict[str, str] = field(default_factory=dict)

    def add(self, metric: str, unit: str, label: str, value: float) -> None:
        self.units[metric] = unit
        self.rows[metric].setdefault(label, []).append(value)

    def print(self) -> None:
        head = (
            f"  {'metric':<44} {'npu-dra min/med/max':>24} {'Go min/med/max':>24} {'ratio':>6}"
            f" {'deployed min/med/max':>24} {'ratio':>6} {'py-gRPC floor':>13}"
        )
        print(head)
        for metric, by_label in self.rows.items():
            cells = [_cell(by_label.get(label)) for label in (*LABELS, PER_POD)]
            ours, theirs, per_pod = (by_label.get(label) for label in (*LABELS, PER_POD))
            floor = by_label.get(FLOOR)
            low = _fmt(statistics.median(floor)) if floor else "n/a"
            name = f"{metric} ({self.units[metric]})"
            print(
                f"  {name:<44} {cells[0]:>24} {cells[1]:>24} {_ratio(ours, theirs):>6}"
                f" {cells[2]:>24} {_ratio(per_pod, theirs):>6} {low:>13}"
            )


def _ratio(ours: list[float] | None, theirs: list[float] | None) -> str:
    if ours and theirs and statistics.median(theirs):
        return f"{statistics.median(ours) / statistics.median(theirs):.2f}"
    return "n/a"


def _cell(samples: list[float] | None) -> str:
    if not samples:
        return "n/a"
    return "/".join(_fmt(v) for v in (min(samples), statistics.median(samples), max(samples)))


def _fmt(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _visible(plane: ControlPlane, plugin: Running, node: str) -> int:
    found = client.ResourceV1Api(plane.api_client).list_resource_slice(
        field_selector=f"spec.driver={plugin.driver},spec.nodeName={node}"
    )
    return sum(len(s.spec.devices or []) for s in found.items)


def _claims(plane: ControlPlane, plugin: Running, node: str) -> list[WireClaim]:
    """One claim per device, allocated as the scheduler leaves it (status written)."""
    resource: Any = client.ResourceV1Api(plane.api_client)
    claims = []
    for device in plugin.devices:
        body = allocated_claim(
            f"{node}-{device}", [device], namespace=NAMESPACE, driver=plugin.driver, pool=node
        )
        made = resource.create_namespaced_resource_claim(NAMESPACE, {**body, "status": None})
        resource.patch_namespaced_resource_claim_status(
            made.metadata.name, NAMESPACE, {"status": body["status"]}
        )
        claims.append(WireClaim(NAMESPACE, made.metadata.name, made.metadata.uid))
    return claims


def _start(
    plane: ControlPlane, node: str, launch: Callable[[], Running], table: Table, label: str
) -> Session:
    """Launches the plugin (a context entered by the caller's stack) and times it to visible."""
    plane.create_ready_node(node)
    began = time.perf_counter()
    plugin = launch()
    wait_for(
        lambda: _visible(plane, plugin, node) == len(plugin.devices) or not plugin.running(),
        timeout=60,
        what=f"{label}'s slices on {node}",
        interval=0.01,
    )
    elapsed = time.perf_counter() - began
    if not plugin.running():
        raise RuntimeError(f"{label} exited:\n{plugin.tail()}")
    table.add("start -> slices visible", "s", label, elapsed)
    table.add("CPU until visible", "s", label, cpu_s(plugin.pid))
    dra = Kubelet(plugin.registry).register("v1")
    table.add("RSS after start", "MiB", label, rss_mib(plugin.pid))
    return Session(plugin, dra, _claims(plane, plugin, node), node)


def _checked(answer: Any, claims: Sequence[WireClaim]) -> None:
    for claim in claims:
        if answer.claims[claim.uid].error:
            raise RuntimeError(f"{claim.name}: {answer.claims[claim.uid].error}")


def _latencies(session: Session, per_call: int, calls: int) -> tuple[list[float], list[float]]:
    """`calls` timed prepares of `per_call` claims, each followed by a timed unprepare."""
    groups = [session.claims[i : i + per_call] for i in range(0, len(session.claims), per_call)]
    prepared: list[float] = []
    unprepared: list[float] = []
    for number in range(WARMUP + calls):
        group = groups[number % len(groups)]
        began = time.perf_counter()
        _checked(session.dra.prepare(group), group)
        middle = time.perf_counter()
        _checked(session.dra.unprepare(group), group)
        ended = time.perf_counter()
        session.prepares += len(group)
        if number >= WARMUP:
            prepared.append(middle - began)
            unprepared.append(ended - middle)
    return prepared, unprepared


def _per_call_phases(session: Session, table: Table) -> None:
    label = session.plugin.label
    for per_call, calls in ((1, CALLS_1), (CALLERS, CALLS_8)):
        cpu_before = cpu_s(session.plugin.pid)
        prepared, unprepared = _latencies(session, per_call, calls)
        cpu = cpu_s(session.plugin.pid) - cpu_before
        for what, samples in (("prepare", prepared), ("unprepare", unprepared)):
            for name, fraction in (("p50", 0.5), ("p99", 0.99)):
                metric = f"{what} {name}, {per_call} claim{'s' if per_call > 1 else ''}/call"
                table.add(metric, "ms", label, _percentile(samples, fraction) * 1e3)
        if per_call == 1:  # CPU of the warm-up calls included; they are few
            table.add("CPU per prepare+unprepare", "ms", label, cpu * 1e3 / (WARMUP + calls))


def _bound_phases(plane: ControlPlane, session: Session, table: Table) -> None:
    """Prepare p50/p99 of claims whose pod was bound to the plugin's node first."""
    devices = session.plugin.devices
    for per_call, calls in ((1, CALLS_1), (CALLERS, CALLS_8)):
        pods = [
            stage(
                plane,
                session.plugin,
                node=session.node,
                devices=[devices[(number + n) % len(devices)] for n in range(per_call)],
                name=f"bound-{session.node}-{per_call}-{number}",
                ns=NAMESPACE,
            )
            for number in range(WARMUP + calls)
        ]
        samples = []
        for number, pod in enumerate(pods):
            bind_and_read(plane, pod)
            began = time.perf_counter()
            _checked(session.dra.prepare(pod.claims), pod.claims)
            if number >= WARMUP:
                samples.append(time.perf_counter() - began)
            _checked(session.dra.unprepare(pod.claims), pod.claims)
            session.prepares += per_call
        remove_all(plane, NAMESPACE)
        for name, fraction in (("p50", 0.5), ("p99", 0.99)):
            metric = (
                f"prepare {name}, {per_call} claim{'s' if per_call > 1 else ''}/call, pod bound"
            )
            table.add(metric, "ms", session.plugin.label, _percentile(samples, fraction) * 1e3)


def _throughput(session: Session, table: Table) -> None:
    """CALLERS threads, one claim each, prepare + unprepare until the clock runs out."""
    counts = [0] * CALLERS
    failures: list[str] = []
    deadline = time.perf_counter() + THROUGHPUT_S

    def caller(index: int) -> None:
        claim = [session.claims[index]]
        try:
            while time.perf_counter() < deadline:
                _checked(session.dra.prepare(claim), claim)
                _checked(session.dra.unprepare(claim), claim)
                counts[index] += 1
        except Exception as error:  # reported below, once every thread ended
            failures.append(f"caller {index}: {error}")

    began = time.perf_counter()
    workers = [threading.Thread(target=caller, args=(i,)) for i in range(CALLERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=THROUGHPUT_S + 60)
    elapsed = time.perf_counter() - began
    if failures or any(w.is_alive() for w in workers):
        raise RuntimeError(f"{session.plugin.label}: throughput phase failed: {failures}")
    session.prepares += sum(counts)
    table.add(
        f"prepares/s, {CALLERS} concurrent callers",
        "1/s",
        session.plugin.label,
        sum(counts) / elapsed,
    )


def _memory_after_prepares(session: Session, table: Table) -> None:
    claim = session.claims[:1]
    while session.prepares < PREPARES_FOR_RSS:
        _checked(session.dra.prepare(claim), claim)
        _checked(session.dra.unprepare(claim), claim)
        session.prepares += 1
    label = session.plugin.label
    metric = f"RSS after {PREPARES_FOR_RSS}+ prepares"
    table.add(metric, "MiB", label, rss_mib(session.plugin.pid))
    table.add("threads after them", "count", label, threads(session.plugin.pid))


def _idle(sessions: Sequence[Session], table: Table) -> None:
    before = [thread_run_ns(s.plugin.pid) for s in sessions]
    time.sleep(IDLE_S)
    for session, cpu in zip(sessions, before, strict=True):
        used = run_since(session.plugin.pid, cpu)
        table.add("idle CPU per 60 s", "ms", session.plugin.label, used * 1e3 * 60 / IDLE_S)


@contextmanager
def _device_plugin(node: str) -> Iterator[tuple[FakeKubelet, Running]]:
    with fake_node(node) as host, FakeKubelet(host.root / "device-plugins") as kubelet:
        argv = [
            str(Path(sys.executable).with_name("npu-dra")),
            "device-plugin",
            f"--node-name={node}",
            f"--device-plugin-path={kubelet.dir}",
            "--hardware=npu-smi",
            f"--npu-smi-path={host.npu_smi}",
            f"--dev-root={host.root / 'dev'}",
            f"--sysfs-root={host.root / 'sys'}",
            f"--cdi-root={host.cdi}",
            # the fake node's own lock: a plugin on this machine's host paths is not its concern
            f"--api-lock-dir={host.root / 'api-lock'}",
        ]
        plugin = Running("npu-dra", "", (), kubelet.dir, spawn_plugin(argv, host.log), host.log)
        try:
            yield kubelet, plugin
        finally:
            plugin.stop()


def _allocate(node: str, table: Table) -> None:
    with _device_plugin(node) as (kubelet, plugin):
        registration = kubelet.wait_for_registrations(1, timeout=60)[0]
        with kubelet.plugin(registration.request.endpoint) as dp:
            ids = sorted(dp.watch().next_list(timeout=30))
            samples = []
            for number in range(WARMUP + ALLOCATE_CALLS):
                began = time.perf_counter()
                answer = dp.allocate([ids[number % len(ids)]])
                if number >= WARMUP:
                    samples.append(time.perf_counter() - began)
                if not answer.container_responses:
                    raise RuntimeError(f"empty Allocate answer: {answer}")
        if not plugin.running():
            raise RuntimeError(f"the device plugin exited:\n{plugin.tail()}")
    for name, fraction in (("p50", 0.5), ("p99", 0.99)):
        table.add(
            f"device plugin Allocate {name}", "ms", "npu-dra", _percentile(samples, fraction) * 1e3
        )


def _round(number: int, plane: ControlPlane, go_binary: Path, table: Table) -> None:
    launchers: dict[str, Callable[[ExitStack, str], Running]] = {
        "npu-dra": lambda stack, node: stack.enter_context(npu_dra(node, plane.kubeconfig)),
        PER_POD: lambda stack, node: stack.enter_context(
            npu_dra(node, plane.kubeconfig, deployed=True)
        ),
        "Go": lambda stack, node: stack.enter_context(
            go_test_driver(go_binary, node, plane.kubeconfig)
        ),
    }
    contenders = (*LABELS, PER_POD)
    order = contenders if number % 2 == 0 else contenders[::-1]
    slugs = {"npu-dra": "npu", "Go": "go", PER_POD: "pod"}
    with ExitStack() as stack:
        sessions = []
        for label in order:
            node = f"vs-{slugs[label]}-{number}"
            session = _start(plane, node, partial(launchers[label], stack, node), table, label)
            stack.callback(session.dra.close)
            sessions.append(session)
        floor = stack.enter_context(grpc_floor())
        dra = Kubelet(floor.registry).register("v1")
        stack.callback(dra.close)
        table.add("RSS after start", "MiB", FLOOR, rss_mib(floor.pid))
        canned = [WireClaim(NAMESPACE, f"floor-{n}", f"floor-uid-{n}") for n in range(DEVICES)]
        sessions.append(Session(floor, dra, canned))
        for session in sessions:
            _per_call_phases(session, table)
        for session in sessions[:-1]:  # not the floor: it reads nothing either way
            _bound_phases(plane, session, table)
        for phase in (_throughput, _memory_after_prepares):
            for session in sessions:
                phase(session, table)
        _idle(sessions, table)
        for session in sessions:
            if not session.plugin.running():
                raise RuntimeError(f"{session.plugin.label} exited:\n{session.plugin.tail()}")
    _allocate(f"vs-dp-{number}", table)


def _say(line: str) -> None:
    print(f"[k8s build] {line}", file=sys.stderr)


def _byte_compiled() -> None:
    """npu-dra's modules byte-compiled, as a wheel install leaves them: a machine that sets
    PYTHONDONTWRITEBYTECODE would otherwise have the plugin compile ~140 modules at every start
    (~0.2 s of CPU until visible that no deployed plugin spends)."""
    package = importlib.util.find_spec("npu_dra")
    for location in (package and package.submodule_search_locations) or ():
        compileall.compile_dir(location, quiet=1)


def main() -> None:
    _byte_compiled()
    bin_dir = build_binaries(_say)
    if isinstance(bin_dir, str):
        raise RuntimeError(bin_dir)
    go_dir = build_binaries(
        _say, script=TEST_DRIVER_SCRIPT, binaries=("dra-test-driver",), what="DRA test driver"
    )
    if isinstance(go_dir, str):
        raise RuntimeError(go_dir)
    table = Table()
    with (
        tempfile.TemporaryDirectory(prefix="npd-vs-", dir="/tmp") as scratch,
        ControlPlane(bin_dir, Path(scratch) / "plane") as plane,
    ):
        plane.create_namespace(NAMESPACE)
        for number in range(ROUNDS):
            _round(number, plane, go_dir / "dra-test-driver", table)
    print(
        "npu-dra vs the Go DRA test driver (kubeletplugin helper; its client QPS raised to "
        f"{GO_QPS}, burst {GO_BURST}), {ROUNDS} interleaved rounds, one control plane, "
        f"{DEVICES} devices each"
    )
    table.print()


if __name__ == "__main__":
    main()
