"""--claim-prefetch on a real control plane (v1.34.3): the plugin runs as the DaemonSet would,
with the deploy/manifests access objects and a token bound to its pod, plus the one rule the
chart adds for the prefetch (PREFETCH_RULE). The real scheduler allocates the seed's template
claim and binds the pod; the plugin, watching the pods bound to its node, reads the claim then,
so the prepare (the test acting as the kubelet) finds it read ahead: /metrics counts a hit and
no miss. Without the rule, the watch is refused: the log says which flag needs what, and the
prepare reads the claim itself as it does with the prefetch off."""

from __future__ import annotations

import contextlib
import re
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.e2e.plugin_process import PluginProcess, fake_node, spawn_plugin
from tests.e2e.seed_cluster import (
    NAMESPACE,
    SCHEDULE_S,
    Seed,
    access_applied,
    bound_node,
    delete_pod,
    pod_bound_kubeconfig,
    pod_claim_names,
    prefetch_granted,
    prepare,
    read_claim,
    unprepare,
    wait_published,
)
from tests.e2e.seed_yaml import SEED_TEMPLATE_AND_POD
from tests.support.controlplane import ControlPlane, free_port, wait_for
from tests.support.k8s_fixtures import plane_for
from tests.support.kubelet import Kubelet

pytestmark = pytest.mark.e2e


@dataclass
class Prefetching:
    seed: Seed
    metrics_port: int


@contextlib.contextmanager
def prefetching_plugin(plane: ControlPlane, *, granted: bool) -> Iterator[Prefetching]:
    with contextlib.ExitStack() as stack:
        stack.enter_context(access_applied(plane))
        if granted:
            stack.enter_context(prefetch_granted(plane))
        node = stack.enter_context(fake_node(f"prefetch-{uuid.uuid4().hex[:6]}"))
        plane.create_ready_node(node.name)
        stack.callback(plane.kubectl, "delete", "node", node.name, check=False)
        port = free_port()
        argv = [
            *node.argv(pod_bound_kubeconfig(plane, node)),
            "--claim-prefetch",
            f"--metrics-port={port}",
        ]
        plugin = PluginProcess(node, spawn_plugin(argv, node.log))
        stack.callback(plugin.stop)
        seed = Seed(plane, node, node, {node.name: plugin})
        wait_published(seed, node.name, SCHEDULE_S)
        yield Prefetching(seed, port)


def metric(port: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
        text = page.read().decode()
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def hits_and_misses(port: int) -> tuple[float, float]:
    return (
        metric(port, 'npu_dra_claim_prefetch_total{result="hit"}'),
        metric(port, 'npu_dra_claim_prefetch_total{result="miss"}'),
    )


def prepared_seed_pod(found: Prefetching, *, read_ahead: bool) -> list[str]:
    """The seed's template pod scheduled here and its claim prepared, as the kubelet does once
    the pod is bound; the devices prepared."""
    seed = found.seed
    seed.plane.kubectl("apply", "-f", "-", input=SEED_TEMPLATE_AND_POD)
    node = bound_node(seed, "npu-pod")
    [claim_name] = pod_claim_names(seed, "npu-pod")
    claim = read_claim(seed.plane, claim_name)
    if read_ahead:  # the kubelet reads it too first; here the test waits for the prefetch
        wait_for(
            lambda: metric(found.metrics_port, "npu_dra_claim_prefetch_ready") == 1 or None,
            timeout=SCHEDULE_S,
            what="the claim read ahead",
        )
    kubelet = Kubelet(seed.node_a.registry).register()
    try:
        devices = prepare({node: kubelet}, node, claim)
        delete_pod(seed, "npu-pod")
        unprepare({node: kubelet}, node, claim)
    finally:
        kubelet.close()
        seed.plane.kubectl("delete", "resourceclaimtemplate", "npu-claim-template", "-n",
                           NAMESPACE, "--ignore-not-found", check=False)  # fmt: skip
    return devices


def test_a_bound_pods_claim_is_read_ahead_and_prepared_from_it(
    request: pytest.FixtureRequest,
) -> None:
    with prefetching_plugin(plane_for(request, "v1.34.3"), granted=True) as found:
        assert hits_and_misses(found.metrics_port) == (0, 0)
        devices = prepared_seed_pod(found, read_ahead=True)
        assert len(devices) == 1
        assert hits_and_misses(found.metrics_port) == (1, 0)
        assert metric(found.metrics_port, "npu_dra_claim_prefetch_ready") == 0


def test_without_the_pod_rule_the_log_names_the_flag_and_prepares_read_the_claim(
    request: pytest.FixtureRequest,
) -> None:
    with prefetching_plugin(plane_for(request, "v1.34.3"), granted=False) as found:
        plugin = found.seed.plugins[found.seed.node_a.name]
        wait_for(
            lambda: ("--claim-prefetch" in plugin.tail(200) and "403" in plugin.tail(200)) or None,
            timeout=SCHEDULE_S,
            what="the refused pod watch logged",
        )
        assert len(prepared_seed_pod(found, read_ahead=False)) == 1
        assert hits_and_misses(found.metrics_port) == (0, 1)
        assert plugin.running()
