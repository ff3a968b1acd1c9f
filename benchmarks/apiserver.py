"""The plugin against a real Kubernetes v1.34.3 API server (etcd, kube-apiserver, controller-manager
and scheduler on loopback, built by tests/e2e/k8s/build.sh if missing: the first build takes tens
of minutes, later runs start in about 10 s).

* Start-up: from `npu-dra kubelet-plugin` process start (fake npu-smi replaying the 8x 910B4
  recording) to its node's 8 NPUs being visible in ResourceSlices through the API.
* NodePrepareResources p50/p99 over the real DRA socket, the plugin reading each claim from the API
  server (in-process plugin on fake hardware, real CDI and checkpoint files; one claim per call,
  unprepared untimed between calls).

Run from the repository root: `python -m benchmarks.apiserver`.
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kubernetes import client

from npu_dra.app.commands.kubelet_plugin_runtime import KubeletPlugin, build_container
from npu_dra.app.options import Hardware, Settings, defaults
from tests.e2e.plugin_process import DRIVER, fake_node, plugin_process
from tests.support.controlplane import ControlPlane, build_binaries, wait_for
from tests.support.kubelet import Kubelet, WireClaim, allocated_claim

STARTS = 3
DEVICES = 8
ROUNDS = 200
WARMUP = 20
NAMESPACE = "bench"


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _device_count(plane: ControlPlane, node: str) -> int:
    found = client.ResourceV1Api(plane.api_client).list_resource_slice(
        field_selector=f"spec.driver={DRIVER},spec.nodeName={node}"
    )
    return sum(len(s.spec.devices or []) for s in found.items)


def _startup_s(plane: ControlPlane, node: str) -> float:
    """Process start to the node's NPUs visible through the API (polled every 10 ms)."""
    plane.create_ready_node(node)
    with fake_node(node) as host:
        started = time.perf_counter()
        with plugin_process(host, plane.kubeconfig) as plugin:
            wait_for(
                lambda: _device_count(plane, node) == DEVICES or not plugin.running(),
                timeout=60,
                what=f"{node}'s slices",
                interval=0.01,
            )
            elapsed = time.perf_counter() - started
            if not plugin.running():
                raise RuntimeError(f"the plugin exited:\n{plugin.tail()}")
    client.CoreV1Api(plane.api_client).delete_node(node)
    return elapsed


def _settings(scratch: Path, plane: ControlPlane, node: str) -> Settings:
    scratch.mkdir(parents=True, exist_ok=True)
    description = scratch / "node.yaml"
    description.write_text(f"chip: 910B4\ncount: {DEVICES}\n")
    return defaults(
        node_name=node,
        driver_name=DRIVER,
        registrar_dir=scratch / "registry",
        plugins_dir=scratch / "plugins",
        cdi_root=scratch / "cdi",
        kubeconfig=str(plane.kubeconfig),
        hardware=Hardware("fake", description),
        log_level="warning",
        cluster="kubernetes",
    )


def _allocated_claims(plane: ControlPlane, node: str) -> list[WireClaim]:
    """One claim per device, allocated as the scheduler would leave it (status written)."""
    resource: Any = client.ResourceV1Api(plane.api_client)
    claims = []
    for index in range(DEVICES):
        body = allocated_claim(
            f"bench-{index}", [f"npu-{index}"], namespace=NAMESPACE, driver=DRIVER, pool=node
        )
        made = resource.create_namespaced_resource_claim(NAMESPACE, {**body, "status": None})
        resource.patch_namespaced_resource_claim_status(
            made.metadata.name, NAMESPACE, {"status": body["status"]}
        )
        claims.append(WireClaim(NAMESPACE, made.metadata.name, made.metadata.uid))
    return claims


def _prepare_latencies(plane: ControlPlane, scratch: Path) -> list[float]:
    node = "bench-prepare"
    plane.create_ready_node(node)
    plane.create_namespace(NAMESPACE)
    plugin = KubeletPlugin(build_container(_settings(scratch, plane, node)))
    try:
        plugin.start()
        claims = _allocated_claims(plane, node)
        latencies = []
        with Kubelet(scratch / "registry").register("v1") as dra:
            for number in range(WARMUP + ROUNDS):
                claim = claims[number % len(claims)]
                begin = time.perf_counter()
                answer = dra.prepare([claim])
                elapsed = time.perf_counter() - begin
                if answer.claims[claim.uid].error:
                    raise RuntimeError(f"prepare failed: {answer}")
                dra.unprepare([claim])
                if number >= WARMUP:
                    latencies.append(elapsed)
        return latencies
    finally:
        plugin.stop()


def main() -> None:
    bin_dir = build_binaries(lambda line: print(f"[k8s build] {line}", file=sys.stderr))
    if isinstance(bin_dir, str):
        raise RuntimeError(bin_dir)
    with tempfile.TemporaryDirectory(prefix="npd-bench-", dir="/tmp") as scratch:
        root = Path(scratch)
        began = time.perf_counter()
        with ControlPlane(bin_dir, root / "plane") as plane:
            print(f"control plane v1.34.3 ready in {time.perf_counter() - began:.1f}s")
            starts = [_startup_s(plane, f"bench-start-{n}") for n in range(STARTS)]
            print(
                "kubelet-plugin process start -> 8 NPUs visible in ResourceSlices: "
                + ", ".join(f"{s:.2f}s" for s in starts)
                + f" (median {statistics.median(starts):.2f}s)"
            )
            latencies = _prepare_latencies(plane, root / "prepare")
            print(
                f"NodePrepareResources, 1 claim read from the API server, {len(latencies)} calls: "
                f"p50 {_percentile(latencies, 0.5) * 1e3:.1f} ms, "
                f"p99 {_percentile(latencies, 0.99) * 1e3:.1f} ms"
            )


if __name__ == "__main__":
    main()
