"""`npu-dra simulate --from` at scale: a generated snapshot in kubectl's shape (a `List` of Nodes,
ResourceSlices as npu-dra publishes them, a DeviceClass, ResourceClaims and Pods with server-set
fields) of 5,000 nodes x 8 NPUs and 20,000 pods: 12,000 running (two NPUs each, allocated),
7,900 pending for one NPU and 100 pending for 16 NPUs, which no node has (so --explain walks
every node for them). Timed: writing nothing, reading the YAML file (load), scheduling the
pending pods (schedule), and scheduling them with --explain (explain). Target (issue #28): load,
schedule and explain together under 60 s on the 2-core CI machine.

Run from the repository root: `python -m benchmarks.simulate_snapshot` (SNAPSHOT_NODES=500 to
shrink; SNAPSHOT_RUNS=3 repeats).
"""

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from npu_dra.adapters.simulation_files.snapshot_load import load_snapshot
from npu_dra.app.container import container_for
from npu_dra.app.options import defaults
from npu_dra.app.simulation.run import simulate

DRIVER = "npu.huawei.com"
NPUS = 8
TARGET_S = 60.0
Obj = dict[str, Any]


def _node(n: int) -> list[Obj]:
    name = f"node-{n:05d}"
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name},
        },
        "spec": {"podCIDR": "10.88.0.0/24"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    devices = [
        {
            "name": f"npu-{i}",
            "attributes": {"chipName": {"string": "910B4"}, "numaNode": {"int": i // 2}},
            "capacity": {"memCapacity": {"value": "32Gi"}},
        }
        for i in range(NPUS)
    ]
    pool = {"name": name, "generation": 1, "resourceSliceCount": 1}
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{name}-{DRIVER}-x", "uid": f"uid-slice-{name}"},
        "spec": {"driver": DRIVER, "nodeName": name, "pool": pool, "devices": devices},
    }
    return [node, slice_]


def _claim(name: str, count: int, node: str | None = None, first: int = 0) -> Obj:
    request = {"name": "npu", "exactly": {"deviceClassName": DRIVER, "count": count}}
    claim: Obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "load", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [request]}},
        "status": {},
    }
    if node is not None:
        results = [
            {"request": "npu", "driver": DRIVER, "pool": node, "device": f"npu-{first + i}"}
            for i in range(count)
        ]
        claim["status"] = {"allocation": {"devices": {"results": results}}}
    return claim


def _pod(name: str, claim: str, node: str | None, second: int) -> Obj:
    spec: Obj = {
        "resourceClaims": [{"name": "npu", "resourceClaimName": claim}],
        "containers": [{"name": "app", "image": "busybox"}],
    }
    if node is not None:
        spec["nodeName"] = node
    stamp = f"2026-11-25T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "load", "creationTimestamp": stamp},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def snapshot(nodes: int) -> Obj:
    """The List: 2.4 running pods per node (two NPUs each), then the pending ones."""
    items: list[Obj] = []
    for n in range(nodes):
        items += _node(n)
    items.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    )
    running, pending = nodes * 12 // 5, nodes * 79 // 50
    for p in range(running):
        node, slot = f"node-{p % nodes:05d}", p // nodes
        items += [_claim(f"r{p}", 2, node, 2 * slot), _pod(f"r{p}", f"r{p}", node, p)]
    for p in range(pending + nodes // 50):
        count = 1 if p < pending else 16
        items += [_claim(f"q{p}", count), _pod(f"q{p}", f"q{p}", None, running + p)]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def load_once(path: Path) -> float:
    started = time.process_time()
    load_snapshot(path)
    return time.process_time() - started


def run_once(path: Path, *, explain: bool) -> tuple[float, float, int]:
    """(load s, schedule s, pods left pending) of one run, CPU seconds of this process."""
    started = time.process_time()
    scenario = load_snapshot(path)
    loaded = time.process_time()
    settings = defaults(cluster="memory")
    root = container_for(settings)
    result = simulate(
        scenario,
        cluster=root.cluster(),
        plugins=[],
        evaluator=root.selector_evaluator(),
        prepare=False,
        explain=explain,
    )
    done = time.process_time()
    return loaded - started, done - loaded, sum(1 for p in result.pods if p.node is None)


def main() -> None:
    nodes = int(os.environ.get("SNAPSHOT_NODES", "5000"))
    runs = int(os.environ.get("SNAPSHOT_RUNS", "3"))
    with tempfile.TemporaryDirectory(prefix="npu-dra-snapshot-") as scratch:
        path, as_json = Path(scratch) / "cluster.yaml", Path(scratch) / "cluster.json"
        listed = snapshot(nodes)
        path.write_text(yaml.safe_dump(listed, sort_keys=False))
        as_json.write_text(json.dumps(listed, indent=4))
        size = path.stat().st_size
        plain = [run_once(path, explain=False) for _ in range(runs)]
        explained = [run_once(path, explain=True) for _ in range(runs)]
        json_loads = [load_once(as_json) for _ in range(runs)]
    print(f"snapshot: {nodes} nodes, {size / 1e6:.0f} MB of YAML; CPU s, min/median/max of {runs}")
    rows = (
        ("load (-o yaml)", [r[0] for r in plain + explained]),
        ("load (-o json)", json_loads),
        ("schedule", [r[1] for r in plain]),
        ("schedule + explain", [r[1] for r in explained]),
    )
    for what, figures in rows:
        low, mid, high = min(figures), statistics.median(figures), max(figures)
        print(f"  {what:<20} {low:7.2f} {mid:7.2f} {high:7.2f}")
    total = statistics.median(r[0] + r[1] for r in explained)
    verdict = "meets" if total < TARGET_S else "MISSES"
    print(
        f"  load + schedule + explain: {total:.1f} s, {total / TARGET_S:.2f} x the {TARGET_S:.0f} s"
        f" target ({verdict}, from -o yaml); pending: {explained[0][2]} pods"
    )


if __name__ == "__main__":
    main()
