"""`npu-dra simulate`: the seed's discover → publish → allocate → prepare flow, offline."""

import argparse
import os
import sys
import tempfile
from pathlib import Path

from npu_dra.adapters.hardware.choose import fake_probe
from npu_dra.adapters.hardware.nvml.fake import is_gpu_description
from npu_dra.adapters.hardware.sliced import sliced_if_described
from npu_dra.app.container import Container, NodeContainer
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.app.simulation.generate import generated_scenario
from npu_dra.app.simulation.render import render
from npu_dra.app.simulation.run import NodePlugin, NodeServices, simulate
from npu_dra.app.simulation.scenario import (
    Scenario,
    ScenarioError,
    check_selectors,
    load_scenario,
)
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DriverName
from npu_dra.domain.profile import profile_named
from npu_dra.domain.scheduling.allocator import DEFAULT_STEP_BUDGET

DEFAULT_DRIVER = "npu.huawei.com"


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="show what the cluster would publish and allocate, with no cluster",
        description=__doc__,
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--scenario", type=Path, help="Kubernetes-shaped YAML (default: built-in)")
    source.add_argument(
        "--generate",
        metavar="nodes=N,npus=N,pods=N",
        help="a generated scenario of identical nodes and NPU pods, for scale runs",
    )
    parser.add_argument("-o", "--output", choices=("table", "yaml", "json"), default="table")
    parser.add_argument(
        "--search-budget",
        type=int,
        default=DEFAULT_STEP_BUDGET,
        metavar="STEPS",
        help="allocation search steps per pod and node before a pod is reported Undecided "
        "(kube-scheduler bounds the search by time instead: 10 s per node)",
    )
    parser.add_argument(
        "--no-prepare",
        dest="prepare",
        action="store_false",
        help="schedule and allocate only; skip the node plugins' NodePrepareResources step",
    )
    parser.add_argument("--driver-name", default=DEFAULT_DRIVER)
    parser.add_argument(
        "--cdi-root", type=Path, help="write CDI specs here (default: a temporary directory)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = Container()
    root.config.from_dict({"cluster": {"kind": "memory"}})
    try:
        scenario = (
            generated_scenario(args.generate) if args.generate else load_scenario(args.scenario)
        )
        check_selectors(scenario, root.selector_evaluator().compile_error)
    except ScenarioError as error:
        print(f"npu-dra simulate: {error}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="npu-dra-sim-") as scratch:
        cdi_root = args.cdi_root or Path(scratch) / "cdi"
        plugins = [
            _plugin(
                root, scenario, i, driver=args.driver_name, cdi_root=cdi_root, scratch=Path(scratch)
            )
            for i in range(len(scenario.nodes))
        ]
        try:
            result = simulate(
                scenario,
                cluster=root.cluster(),
                plugins=plugins,
                evaluator=root.selector_evaluator(),
                prepare=args.prepare,
                budget=args.search_budget,
            )
        except DomainError as error:
            print(f"npu-dra simulate: {scenario.source}: {error}", file=sys.stderr)
            return 1
        return _print(render(result, args.output))


def _print(text: str) -> int:
    """Print; a reader that went away (`| head`) ends the output quietly, as for any CLI."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 0


def _plugin(
    root: Container, scenario: Scenario, index: int, *, driver: str, cdi_root: Path, scratch: Path
) -> NodePlugin:
    """The node's publisher now; its full plugin container (preparer, CDI and checkpoint
    stores) only when a pod lands there, since wiring one costs milliseconds per node."""
    name, hardware = scenario.nodes[index]
    # An NVIDIA node's devices belong to the GPU profile and its driver; --driver-name names
    # the Ascend nodes' driver.
    profile = "gpu" if is_gpu_description(hardware) else "npu"
    driver = profile_named("gpu").default_driver if profile == "gpu" else driver
    inventory = InventoryCache(sliced_if_described(fake_probe(dict(hardware), node=name)))
    publisher = PoolPublisher(
        inventory=inventory, cluster=root.cluster(), driver=DriverName(driver)
    )

    def build() -> NodeServices:
        node = NodeContainer(cluster=root.cluster)
        node.config.from_dict(
            {
                "node_name": name,
                "driver_name": driver,
                "device_profile": profile,
                "hardware": {"kind": "fake", "description": dict(hardware)},
                "state": {"kind": "files"},
                "cdi_root": str(cdi_root / name),
                "plugins_dir": str(scratch / "plugins" / name),
                "partitions": "templates" if hardware.get("vnpu") else "none",
            }
        )
        return NodeServices(node.preparer(), node.cdi_store())

    return NodePlugin(name, publisher, build, inventory)
