"""The simulation's own graph: the CEL selector evaluator, which only the simulation builds (its
nodes are ordinary node graphs over an in-memory cluster), so the plugins never import CEL; and
the live cluster reader `--from-cluster` uses (adapters/cluster/kube/snapshot_read.py)."""

from typing import TYPE_CHECKING

from npu_dra.app.options import Settings

if TYPE_CHECKING:
    from npu_dra.adapters.simulation_files.scenario import Scenario
    from npu_dra.domain.scheduling.ports import SelectorEvaluator


def selector_evaluator(settings: Settings) -> "SelectorEvaluator":
    """The simulation's CEL evaluator (the plugins never evaluate selectors), with the CEL
    environment of the simulated version and gates (`--kubernetes-version`, `--feature-gates`)."""
    from npu_dra.adapters.cel.evaluator import CelSelectorEvaluator

    return CelSelectorEvaluator(settings.simulated)


class LiveReadError(Exception):
    """`--from-cluster` could not read the cluster: the message names the flag and the server."""


def live_snapshot(settings: Settings) -> "Scenario":
    """`--from-cluster`: the cluster's objects read once, decoded as a `--from` snapshot.
    LiveReadError naming the flag for a server it cannot read."""
    import os
    from pathlib import Path

    from npu_dra.adapters.cluster.kube.snapshot_read import (
        ClusterReadError,
        read_cluster,
        reading_client,
        server_of,
    )
    from npu_dra.adapters.simulation_files.snapshot_load import snapshot_limits, snapshot_of

    kubeconfig, in_cluster = settings.kubeconfig, "KUBERNETES_SERVICE_HOST" in os.environ
    home = Path.home() / ".kube" / "config"
    if not kubeconfig and not in_cluster and home.is_file():  # kubectl's default
        kubeconfig = str(home)
    try:
        api = reading_client(kubeconfig, in_cluster)
        try:
            objects = read_cluster(api, snapshot_limits())
        finally:
            api.close()  # type: ignore[no-untyped-call]
    except ClusterReadError as error:
        raise LiveReadError(str(error)) from error
    return snapshot_of(f"cluster {server_of(api)}", objects)
