"""Pods are scheduled as kube-scheduler v1.34 would: node filters before DRA, all of a pod's
claims together, CEL errors failing the pod, firstAvailable, gates, creation order."""

import contextlib
import fcntl
import io
import json
import os
import textwrap
import threading
from pathlib import Path
from typing import Any

from npu_dra.app.cli import main

HEAD = """\
kind: SimulatedNode
metadata: {name: a, labels: {zone: east}}
spec:
  hardware: {chip: 910B4, count: 2}
---
kind: SimulatedNode
metadata: {name: b}
spec:
  hardware: {chip: 910B4, count: 2, numaNodes: [0, 0]}
  taints: [{key: dedicated, value: training, effect: NoSchedule}]
---
kind: DeviceClass
metadata: {name: npu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "npu.huawei.com"'}
---
kind: ResourceClaimTemplate
metadata: {name: one, namespace: t}
spec:
  spec:
    devices:
      requests:
      - {name: npu, exactly: {deviceClassName: npu}}
"""


def pod(name: str, spec: str = "") -> str:
    body = textwrap.indent(textwrap.dedent(spec), "  ")
    return (
        f"kind: Pod\nmetadata: {{name: {name}, namespace: t}}\nspec:\n{body}"
        "  resourceClaims: [{name: npu, resourceClaimTemplateName: one}]\n"
        "  containers: [{name: app, image: busybox}]\n"
    )


def simulate(tmp_path: Path, *documents: str) -> dict[str, dict[str, Any]]:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([HEAD, *documents]))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--scenario", str(path), "-o", "json", "--no-prepare"])
    assert code == 0, err.getvalue()
    return {p["pod"]: p for p in json.loads(out.getvalue())["pods"]}


def test_node_selector_and_taints_filter_nodes(tmp_path: Path) -> None:
    pods = simulate(
        tmp_path,
        pod("east", "nodeSelector: {zone: east}\n"),
        pod("west", "nodeSelector: {zone: west}\n"),
        pod("anywhere"),
    )
    assert (pods["t/east"]["node"], pods["t/east"]["nodesThatFit"]) == ("a", 1)
    assert pods["t/west"]["status"] == "Pending"
    assert pods["t/west"]["reason"] == (
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint(s)."
    )
    assert pods["t/anywhere"]["node"] == "a"  # b's taint is not tolerated


def test_a_toleration_and_required_affinity_reach_the_tainted_node(tmp_path: Path) -> None:
    spec = """\
        tolerations: [{key: dedicated, operator: Exists}]
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions: [{key: zone, operator: DoesNotExist}]
        """
    pods = simulate(tmp_path, pod("trainer", spec))
    assert (pods["t/trainer"]["node"], pods["t/trainer"]["nodesThatFit"]) == ("b", 1)


def test_a_gated_pod_is_not_scheduled(tmp_path: Path) -> None:
    pods = simulate(tmp_path, pod("gated", "schedulingGates: [{name: example.com/wait}]\n"))
    assert pods["t/gated"]["status"] == "SchedulingGated"
    assert pods["t/gated"]["node"] is None


def test_a_cel_runtime_error_on_one_node_fails_the_pod(tmp_path: Path) -> None:
    """Node a's NPUs lack numaNode: the selector errs there, so the scheduler fails the pod
    with the error instead of placing it on b."""
    template = """\
kind: ResourceClaimTemplate
metadata: {name: numa0, namespace: t}
spec:
  spec:
    devices:
      requests:
      - name: npu
        exactly:
          deviceClassName: npu
          selectors:
          - cel: {expression: 'device.attributes["npu.huawei.com"].numaNode == 0'}
"""
    numa = pod("numa", "tolerations: [{operator: Exists}]\n").replace("one}", "numa0}")
    pods = simulate(tmp_path, template, numa)
    assert pods["t/numa"]["status"] == "Error"
    assert "selector #0: CEL runtime error" in pods["t/numa"]["reason"]


def test_first_available_falls_back_to_a_later_subrequest(tmp_path: Path) -> None:
    template = """\
kind: ResourceClaimTemplate
metadata: {name: big-or-small, namespace: t}
spec:
  spec:
    devices:
      requests:
      - name: npu
        firstAvailable:
        - {name: four, deviceClassName: npu, count: 4}
        - {name: two, deviceClassName: npu, count: 2}
"""
    pods = simulate(tmp_path, template, pod("p").replace("one}", "big-or-small}"))
    (devices,) = pods["t/p"]["claims"].values()
    assert [d["request"] for d in devices] == ["npu/two", "npu/two"]


def test_pods_are_scheduled_in_creation_order(tmp_path: Path) -> None:
    pods = simulate(tmp_path, pod("p1"), pod("p2"), pod("p3"))
    assert [pods[f"t/p{i}"]["status"] for i in (1, 2, 3)] == ["Bound", "Bound", "Pending"]


def test_a_closed_pipe_ends_the_output_quietly() -> None:
    """As `npu-dra simulate | head -1`: the reader takes the first line and goes away while
    the output is still being written (the pipe holds one page, the table is ~30 kB)."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    first: list[bytes] = []

    def head() -> None:
        with os.fdopen(read_end, "rb", buffering=0) as reader:
            first.append(reader.read(4096).split(b"\n", 1)[0])

    reader = threading.Thread(target=head)
    reader.start()
    err = io.StringIO()
    with (
        os.fdopen(write_end, "w", closefd=False) as pipe,
        contextlib.redirect_stdout(pipe),
        contextlib.redirect_stderr(err),
    ):
        code = main(["simulate", "--generate", "nodes=10"])
    reader.join(timeout=10)
    os.close(write_end)
    assert code == 0, err.getvalue()
    assert first == [b"# Nodes and devices"]
    assert err.getvalue() == ""


def test_a_generated_cluster_fills_without_handing_a_device_out_twice() -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--generate", "nodes=3,npus=4,pods=9", "-o", "json"])
    assert code == 0, err.getvalue()
    pods = json.loads(out.getvalue())["pods"]
    held = [
        (p["node"], d["pool"], d["device"])
        for p in pods
        for devices in p["claims"].values()
        for d in devices
    ]
    assert all(node == pool for node, pool, _ in held)  # each node's pool is named after it
    assert len(held) == len(set(held)) == 11  # of 12: pairs need one NUMA node, one is left
    assert [p["status"] for p in pods].count("Bound") == 8  # the 8th pod, a pair, found none


def test_a_search_that_runs_out_of_steps_is_undecided_not_guessed(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([HEAD, pod("p", "nodeSelector: {zone: east}\n")]))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--scenario", str(path), "--search-budget", "1"])
    assert code == 0, err.getvalue()
    (line,) = [row for row in out.getvalue().splitlines() if row.startswith("t/p ")]
    assert "Undecided: 0/2 nodes are available" in line
    assert "allocation search exceeded simulate's step budget" in line
