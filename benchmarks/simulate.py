"""How fast `npu-dra simulate` schedules pods with claims as the cluster grows.

Generated scenarios (`--generate nodes=N,npus=8,pods=4N`): identical 8-NPU nodes, pods taking
one NPU or two on one NUMA node in turn. "set-up" is generating the scenario and wiring each
node's publisher; "simulate" is publishing every pool, creating the claims and every pod's
scheduling cycle and allocation (NodePrepareResources is skipped, as with `--no-prepare`).
For scale, kube-scheduler's own scheduler_perf DRA thresholds at 500 nodes are 40-70 pods/s
(k8s.io/kubernetes v1.34.3 test/integration/scheduler_perf/dra/performance-config.yaml,
e.g. 5000pods_500nodes: threshold 40, "typically above 51"). Target: 500 nodes x 8 NPUs x
2000 pods under 10 s.

Run from the repository root: `python -m benchmarks.simulate` (SIMULATE_SIZES=50,500 to limit).
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

from npu_dra.adapters.simulation_files.generate import generated_scenario
from npu_dra.app.container import container_for
from npu_dra.app.options import defaults
from npu_dra.app.simulation.run import simulate
from npu_dra.app.wiring.simulated_nodes import node_plugin

SIZES = (50, 500, 5000)
PODS_PER_NODE = 4
TARGET_S = 10.0


def run_once(nodes: int, pods: int) -> tuple[float, float, float, int]:
    """(set-up CPU s, simulate CPU s, simulate wall s, pods bound)."""
    started = time.process_time()
    scenario = generated_scenario(f"nodes={nodes},npus=8,pods={pods}")
    with tempfile.TemporaryDirectory(prefix="npu-dra-bench-") as scratch:
        settings = defaults(
            cluster="memory", cdi_root=Path(scratch) / "cdi", plugins_dir=Path(scratch) / "plugins"
        )
        root = container_for(settings)
        plugins = [node_plugin(root, scenario, i, settings) for i in range(len(scenario.nodes))]
        ready = time.process_time()
        wall = time.perf_counter()
        result = simulate(
            scenario,
            cluster=root.cluster(),
            plugins=plugins,
            evaluator=root.selector_evaluator(),
            prepare=False,
        )
        done = time.process_time()
        wall = time.perf_counter() - wall
    bound = sum(1 for p in result.pods if p.node is not None)
    return ready - started, done - ready, wall, bound


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default=os.environ.get("SIMULATE_SIZES", ""))
    args, _ = parser.parse_known_args()
    sizes = tuple(int(s) for s in args.sizes.split(",") if s) or SIZES
    print("CPU seconds of this process (the machine is shared; wall time is shown too)")
    print(
        f"{'nodes':>6} {'pods':>6} {'bound':>6} {'set-up':>8} {'simulate':>9} {'wall':>8}"
        f" {'pods/s':>7}"
    )
    for nodes in sizes:
        pods = nodes * PODS_PER_NODE
        scenario_s, simulate_s, wall_s, bound = run_once(nodes, pods)
        rate = pods / simulate_s
        print(
            f"{nodes:>6} {pods:>6} {bound:>6} {scenario_s:>7.2f}s {simulate_s:>8.2f}s"
            f" {wall_s:>7.2f}s {rate:>7.0f}"
        )
        if nodes == 500:
            total = scenario_s + simulate_s
            verdict = "meets" if total < TARGET_S else "MISSES"
            print(
                f"       500 nodes x 8 NPUs x {pods} pods: {total:.2f} s, {verdict} < {TARGET_S} s"
            )


if __name__ == "__main__":
    main()
