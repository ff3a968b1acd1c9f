"""`npu-dra simulate`: the seed's discover → publish → allocate → prepare flow, offline."""

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from npu_dra.app import logs
from npu_dra.app.options import Settings, add_options, settings_from

FAILED_RUN = 1  # an error stopped the run
UNUSABLE = 2  # the flags or the file are unusable: nothing ran
FAILED_PODS = 3  # --fail-on-pending: some pod was left pending or in error
REFUSED_OBJECTS = 4  # it ran, without the objects the API server would refuse (summary.py)
MAX_NAMED = 10  # pods named in that message
EXIT_STATUSES = f"""\
exit status:
  0  it ran
  {FAILED_RUN}  an error stopped the run
  {UNUSABLE}  the flags or the file are unusable (not YAML, not a list of objects): nothing ran
  {FAILED_PODS}  --fail-on-pending: a pod was left pending or in error
  {REFUSED_OBJECTS}  it ran, but objects the API server would refuse were left out (each named
     on stderr and under `refused`); this wins over {FAILED_PODS}
"""

if TYPE_CHECKING:
    from npu_dra.adapters.simulation_files.scenario import Scenario
    from npu_dra.app.container import Container
    from npu_dra.app.simulation.run import SimulationResult


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="show what the cluster would publish and allocate, with no cluster",
        description=__doc__,
        epilog=EXIT_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_options(parser, "simulate")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """The simulation, on a thread that carries the nesting a real cluster's objects can have
    (adapters/simulation_files/nesting.py) through every recursive step."""
    from npu_dra.adapters.simulation_files.nesting import on_deep_stack

    return on_deep_stack(lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    settings = settings_from(args).derive(cluster="memory")
    logs.configure(level=settings.log_level, fmt=settings.log_format)
    from npu_dra.adapters.simulation_files.scenario import ScenarioError
    from npu_dra.app.container import container_for
    from npu_dra.app.wiring.simulate import LiveReadError
    from npu_dra.domain.errors import DomainError

    unusable = _unusable(settings)
    if unusable:
        print(f"npu-dra simulate: {unusable}", file=sys.stderr)
        return UNUSABLE
    try:
        settings = _decided_as(settings)
    except DomainError as error:
        print(f"npu-dra simulate: {error}", file=sys.stderr)
        return UNUSABLE
    root = container_for(settings)
    try:
        scenario = _scenario(root, settings)
    except ScenarioError as error:
        print(f"npu-dra simulate: {error}", file=sys.stderr)
        return UNUSABLE
    except LiveReadError as error:
        print(f"npu-dra simulate: {error}", file=sys.stderr)
        return FAILED_RUN
    warnings = _notes(scenario, settings)
    code = _simulate(root, scenario, settings, warnings)
    return REFUSED_OBJECTS if scenario.refused and code in (0, FAILED_PODS) else code


def _unusable(settings: Settings) -> str:
    """What makes the flags unusable together; empty when nothing does."""
    if settings.from_cluster and settings.snapshot:
        return "--from and --from-cluster: one cluster state at a time"
    live = settings.snapshot or settings.from_cluster
    if (settings.cordon or settings.remove_node or settings.unhealthy) and not live:
        return "--cordon, --remove-node and --unhealthy need --from or --from-cluster"
    if settings.generate and (settings.scenario or live):
        return "--generate goes alone, not with --scenario, --from or --from-cluster"
    return ""


def _notes(scenario: "Scenario", settings: Settings) -> tuple[str, ...]:
    """What the run leaves out, on stderr: refused objects, kinds it skips, features gated off;
    the warnings (the last two) also go into the JSON and YAML documents."""
    for refusal in scenario.refused:
        print(f"npu-dra simulate: {scenario.source}: refused {refusal}", file=sys.stderr)
    warnings = list(scenario.warnings)
    for warning in warnings:
        print(f"npu-dra simulate: warning: {warning}", file=sys.stderr)
    if scenario.skipped:
        kinds = ", ".join(f"{n} {kind}" for kind, n in scenario.skipped.items())
        skipped = f"{scenario.source}: skipped {kinds}: kinds simulate does not use"
        print(f"npu-dra simulate: {skipped}", file=sys.stderr)
        warnings.append(skipped)
    for warning in _gated_off(scenario, settings):
        print(f"npu-dra simulate: warning: {warning}", file=sys.stderr)
        warnings.append(warning)
    return tuple(warnings)


def _gated_off(scenario: "Scenario", settings: Settings) -> list[str]:
    from npu_dra.app.simulation.gated_off import gated_off
    from npu_dra.domain.scheduling.versions import scheduler_version

    return gated_off(scenario, settings.simulated or scheduler_version())


def _decided_as(settings: Settings) -> Settings:
    """The settings with the kube-scheduler version and gates to decide as; GateError naming the
    flag when the version lacks a gate or locks it."""
    from npu_dra.domain.scheduling.versions import parse_gates, scheduler_version

    gates = parse_gates(settings.feature_gates)
    return settings.derive(simulated=scheduler_version(settings.kubernetes_version, gates))


def _scenario(root: "Container", settings: Settings) -> "Scenario":
    """The scenario generated, read, or a cluster's snapshot with a scenario's what-ifs on top,
    its CEL selectors compiled as the API server would."""
    from npu_dra.adapters.simulation_files.generate import generated_scenario
    from npu_dra.adapters.simulation_files.scenario_load import load_scenario
    from npu_dra.adapters.simulation_files.scenario_selectors import check_selectors

    driver = settings.driver_name
    if settings.snapshot is not None or settings.from_cluster:
        scenario = _snapshot(settings)
    elif settings.generate:
        scenario = generated_scenario(settings.generate, driver=driver)
    else:
        scenario = load_scenario(settings.scenario, driver=driver)
    return check_selectors(scenario, root.selector_evaluator().compile_error)


def _snapshot(settings: Settings) -> "Scenario":
    from npu_dra.adapters.simulation_files.scenario_load import load_scenario
    from npu_dra.adapters.simulation_files.snapshot_load import load_snapshot, with_overlay
    from npu_dra.adapters.simulation_files.what_if import apply_what_ifs, what_ifs
    from npu_dra.app.wiring.simulate import live_snapshot

    changes = what_ifs(settings.cordon, settings.remove_node, settings.unhealthy)
    if settings.snapshot is None:
        scenario = apply_what_ifs(live_snapshot(settings), changes)
    else:
        scenario = apply_what_ifs(load_snapshot(settings.snapshot), changes)
    if settings.scenario is None:
        return scenario
    checked, notes = _policies(scenario, settings.driver_name)
    overlay = load_scenario(
        settings.scenario, driver=settings.driver_name, overlay=True, npu_config_policy=checked
    )
    return attrs.evolve(with_overlay(scenario, overlay), warnings=notes)


def _policies(snapshot: "Scenario", driver: str) -> tuple[bool, tuple[str, ...]]:
    """Whether the what-ifs' config entries are checked as npu-dra's NpuConfig policy checks
    them (the snapshot's own policies decide where it holds them), and what to say of it."""
    from npu_dra.adapters.simulation_files.admission_policies import (
        assumed_note,
        cluster_policies,
        not_evaluated_note,
    )

    found = cluster_policies(snapshot.admission_policies, driver)
    if found is None:
        return True, (assumed_note(snapshot.source),)
    notes = (not_evaluated_note(snapshot.source, found.others),) if found.others else ()
    return found.npu_config, notes


def _simulate(
    root: "Container", scenario: "Scenario", settings: Settings, warnings: tuple[str, ...]
) -> int:
    """Run the scenario with one plugin per node, their files in a scratch directory, and print
    what happened; 1 for an error that stops the run."""
    from npu_dra.app.simulation.progress import terminal_progress
    from npu_dra.app.simulation.run import simulate
    from npu_dra.app.wiring.simulated_nodes import node_plugin
    from npu_dra.domain.errors import DomainError

    with tempfile.TemporaryDirectory(prefix="npu-dra-sim-") as scratch:
        cdi = settings.cdi_out or Path(scratch) / "cdi"
        node_settings = settings.derive(cdi_root=cdi, plugins_dir=Path(scratch) / "plugins")
        plugins = [
            node_plugin(root, scenario, i, node_settings) for i in range(len(scenario.nodes))
        ]
        progress = terminal_progress(sys.stderr, len(scenario.pods))
        try:
            result = simulate(
                scenario,
                cluster=root.cluster(),
                plugins=plugins,
                evaluator=root.selector_evaluator(),
                prepare=settings.prepare,
                budget=settings.search_budget,
                on_pod=progress.pod_done if progress else None,
                explain=settings.explain,
                version=settings.simulated,
            )
        except DomainError as error:
            print(f"npu-dra simulate: {scenario.source}: {error}", file=sys.stderr)
            return FAILED_RUN
        finally:
            if progress is not None:
                progress.close()
        return _report(attrs.evolve(result, warnings=warnings), settings)


def _report(result: "SimulationResult", settings: Settings) -> int:
    """The result printed in the chosen form; the exit status --fail-on-pending asks for."""
    from npu_dra.app.simulation.render import render
    from npu_dra.app.simulation.summary import summary_line

    output = settings.output or "table"
    code = _print(render(result, output))
    if output != "table":  # the document has it; a CI log shows it too
        print(summary_line(result), file=sys.stderr)
    return _exit_code(result) if settings.fail_on_pending else code


def _exit_code(result: "SimulationResult") -> int:
    """--fail-on-pending: 3 when a pod is left pending or in error, naming them with why."""
    from npu_dra.app.simulation.render import status_text
    from npu_dra.app.simulation.summary import not_bound

    left = not_bound(result)
    if not left:
        return 0
    names = ", ".join(f"{p.pod.namespace}/{p.pod.name}" for p in left[:MAX_NAMED])
    more = f" and {len(left) - MAX_NAMED} more" if len(left) > MAX_NAMED else ""
    noun = "pod" if len(left) == 1 else "pods"
    print(f"npu-dra simulate: {len(left)} {noun} not bound: {names}{more}", file=sys.stderr)
    for p in left[:MAX_NAMED]:
        print(f"  {p.pod.namespace}/{p.pod.name}: {status_text(p)}", file=sys.stderr)
    return FAILED_PODS


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
