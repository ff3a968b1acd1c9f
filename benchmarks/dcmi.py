"""DCMI against npu-smi on the same recorded host (8 x 910B4), the stand-in libdcmi.so serving it:

* Re-probe: wall and CPU time of one probe (CPU counts the npu-smi processes a probe runs).
* Idle CPU: `npu-dra kubelet-plugin` on a real Kubernetes v1.34.3 API server (DRADeviceTaints
  on), published and idle with the default --health-interval of 10 s, over IDLE_S seconds:
  CPU seconds of the plugin and the npu-smi processes it ran, per minute.
* Fault to taint: a SeparateNPU fault code injected into the stand-in until the API server
  holds the NPU's NoExecute taint (read every 10 ms), with DCMI's fault events (the re-probe an
  hour away, so only the event can do it) and with subscription refused (-8255: polling at the
  default 10 s interval); then the code is cleared and the taint awaited gone. Each fault comes
  a random 0-10 s after the last recovery, so polling is met anywhere in its cycle.

The fake npu-smi is a Python process per call, the stand-in a few C functions: the figures bound
what a probe costs in calls and processes, not real npu-smi's or real DCMI's speed.

Run from the repository root: `python -m benchmarks.dcmi`.
"""

import contextlib
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from kubernetes import client

from benchmarks._procstat import run_since, thread_run_ns
from npu_dra.domain.ids import NodeName
from npu_dra.domain.ports import HardwareProbe
from tests.e2e.dcmi_node import SEPARATE_NPU, DcmiNode, dcmi_node
from tests.e2e.plugin_process import fake_node, plugin_process
from tests.e2e.seed_cluster import access_applied, node_slices, pod_bound_kubeconfig
from tests.support.controlplane import ControlPlane, build_binaries, wait_for
from tests.support.dcmi_stub import StubHost, dcmi_probe

PROBES = 30
IDLE_S = float(os.environ.get("NPU_DRA_BENCH_IDLE_S", "60"))
FAULTS = int(os.environ.get("NPU_DRA_BENCH_FAULTS_N", "5"))
HEALTH_INTERVAL_S = 10.0  # the plugin's default
_TICKS = os.sysconf("SC_CLK_TCK")


def _spread(values: list[float]) -> str:
    v = [x * 1e3 for x in values]
    return f"min {min(v):7.1f} ms  median {statistics.median(v):7.1f} ms  max {max(v):7.1f} ms"


def _cpu_self_and_children() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed(probe: HardwareProbe) -> tuple[list[float], list[float]]:
    probe.probe()  # the first probe reads what is read once (topology, the library)
    walls, cpus = [], []
    for _ in range(PROBES):
        wall, cpu = time.perf_counter(), _cpu_self_and_children()
        probe.probe()
        walls.append(time.perf_counter() - wall)
        cpus.append(_cpu_self_and_children() - cpu)
    return walls, cpus


def probe_main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        host = StubHost.from_scenario("910B4_8npu", Path(scratch))
        print(f"re-probe of 8 x 910B4 ({PROBES} probes each)")
        for label, probe in (
            ("npu-smi", host.npu_smi_probe(NodeName("bench"))),
            ("DCMI", dcmi_probe(host)),
        ):
            walls, cpus = _timed(probe)
            print(f"  {label:8} wall {_spread(walls)}")
            print(f"  {label:8} CPU  {_spread(cpus)}")


def _children_cpu_s(pid: int) -> float:
    """User + system CPU of the process's reaped children (the npu-smi calls), in ticks."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[13]) + int(fields[14])) / _TICKS


def _idle_cpu_per_minute(pid: int) -> tuple[float, float]:
    """CPU seconds per minute of the plugin's own threads (to the nanosecond) and of the
    processes it ran, over IDLE_S seconds after one health interval's settling."""
    time.sleep(HEALTH_INTERVAL_S)  # past the start's work
    threads, children = thread_run_ns(pid), _children_cpu_s(pid)
    time.sleep(IDLE_S)
    own, ran = run_since(pid, threads), _children_cpu_s(pid) - children
    return own * 60.0 / IDLE_S, ran * 60.0 / IDLE_S


def idle_main(plane: ControlPlane) -> None:
    print(f"idle plugin, --health-interval {HEALTH_INTERVAL_S:.0f}s, {IDLE_S:.0f}s window")
    with access_applied(plane), fake_node("idle-smi") as node:
        plane.create_ready_node(node.name)
        token = pod_bound_kubeconfig(plane, node)
        with plugin_process(node, token, health_interval_s=HEALTH_INTERVAL_S) as plugin:
            wait_for(lambda: len(node_slices(plane, node.name)) == 1, timeout=60, what="published")
            smi = _idle_cpu_per_minute(plugin.popen.pid)
        plane.kubectl("delete", "node", node.name, check=False)
    with dcmi_node(plane, health_interval_s=HEALTH_INTERVAL_S) as found:
        dcmi = _idle_cpu_per_minute(found.plugin.popen.pid)
    for label, (own, ran) in (("npu-smi", smi), ("DCMI", dcmi)):
        print(
            f"  {label:8} {(own + ran) * 1e3:7.1f} ms CPU per minute: plugin {own * 1e3:.1f} ms, "
            f"processes it ran {ran * 1e3:.1f} ms"
        )
    ratio = sum(smi) / max(sum(dcmi), 1e-6)
    print(f"  DCMI vs npu-smi: {ratio:.1f}x less idle CPU")


def _taint_of(plane: ControlPlane, node: str) -> Callable[[], bool]:
    api = client.CustomObjectsApi(plane.api_client)

    def tainted() -> bool:
        found = api.list_cluster_custom_object(
            "resource.k8s.io", "v1", "resourceslices", field_selector=f"spec.nodeName={node}"
        )
        return any(
            d["name"] == "npu-2" and d.get("taints")
            for s in found["items"]
            for d in s["spec"].get("devices", [])
        )

    return tainted


def _latencies(found: DcmiNode) -> list[float]:
    tainted, samples = _taint_of(found.plane, found.node.name), []
    for _ in range(FAULTS):
        time.sleep(random.uniform(0, HEALTH_INTERVAL_S))  # anywhere in the re-probe cycle
        began = time.perf_counter()
        found.host.set_fault(2, health=3, codes=(SEPARATE_NPU,))
        while not tainted():
            time.sleep(0.01)
        samples.append(time.perf_counter() - began)
        found.host.set_fault(2, health=0, codes=())
        wait_for(lambda: not tainted(), timeout=60, what="taint removed")
    return samples


def taint_main(plane: ControlPlane) -> None:
    print(f"fault to taint on the API server ({FAULTS} faults each)")
    with dcmi_node(plane) as found:
        events = _latencies(found)
    with dcmi_node(plane, subscribe=False, health_interval_s=HEALTH_INTERVAL_S) as found:
        polled = _latencies(found)
    print(f"  DCMI fault events:        {_spread(events)}")
    print(f"  polling every {HEALTH_INTERVAL_S:.0f}s:        {_spread(polled)}")
    ratio = statistics.median(polled) / statistics.median(events)
    print(f"  events vs polling: median {ratio:.0f}x sooner")


@contextlib.contextmanager
def _plane() -> Iterator[ControlPlane]:
    bin_dir = build_binaries(lambda line: print(f"[k8s build] {line}", file=sys.stderr))
    if isinstance(bin_dir, str):
        raise RuntimeError(bin_dir)
    gates = {"DRADeviceTaints": True}
    with (
        tempfile.TemporaryDirectory(prefix="npd-bench-", dir="/tmp") as scratch,
        ControlPlane(bin_dir, Path(scratch) / "plane", feature_gates=gates) as plane,
    ):
        yield plane


def main() -> None:
    probe_main()
    with _plane() as plane:
        taint_main(plane)
        idle_main(plane)


if __name__ == "__main__":
    main()
