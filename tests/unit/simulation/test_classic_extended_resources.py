"""A snapshot Node's extended resources in `status.allocatable`, as a classic device plugin
(npu-dra's own `device-plugin` mode included) advertises them: NodeResourcesFit counts a pod's
request against what the node has left, as for cpu (kubernetes v1.34.3 pkg/scheduler/framework/
plugins/noderesources/fit.go `fitsRequest`, its ScalarResources loop; v1.36.3 alike), when no
DeviceClass maps the name to DRA."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.unit.simulation.test_simulate_default import simulate

ASCEND = "huawei.com/Ascend910"
SNAPSHOT = f"""\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {{name: dp-node}}
  status: {{allocatable: {{cpu: '8', memory: 32Gi, pods: '110', {ASCEND}: '8'}}}}
- apiVersion: v1
  kind: Node
  metadata: {{name: plain-node}}
  status: {{allocatable: {{cpu: '8', memory: 32Gi, pods: '110'}}}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: running, namespace: t}}
  spec:
    nodeName: dp-node
    containers: [{{name: app, image: x, resources: {{limits: {{{ASCEND}: '6'}}}}}}]
  status: {{phase: Running}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: two, namespace: t, creationTimestamp: '2026-01-01T00:00:01Z'}}
  spec:
    containers: [{{name: app, image: x, resources: {{limits: {{{ASCEND}: '2'}}}}}}]
- apiVersion: v1
  kind: Pod
  metadata: {{name: one-more, namespace: t, creationTimestamp: '2026-01-01T00:00:02Z'}}
  spec:
    containers: [{{name: app, image: x, resources: {{limits: {{{ASCEND}: '1'}}}}}}]
"""


def _run(tmp_path: Path, *args: str) -> dict[str, Any]:
    path = tmp_path / "cluster.yaml"
    path.write_text(SNAPSHOT)
    code, out, err = simulate("--from", str(path), "-o", "json", "--no-prepare", *args)
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def test_a_device_plugins_resource_is_counted_on_the_node_that_advertises_it(
    tmp_path: Path,
) -> None:
    pods = {p["pod"]: p for p in _run(tmp_path, "--explain")["pods"]}
    assert pods["t/two"]["node"] == "dp-node"  # 8 advertised, 6 held by the running pod
    assert pods["t/one-more"]["node"] is None
    assert pods["t/one-more"]["reason"] == (f"0/2 nodes are available: 2 Insufficient {ASCEND}.")
    reasons = {r["reason"]: r["nodes"] for r in pods["t/one-more"]["explain"]}
    assert reasons[f"the node's resources: the pod requests 1 {ASCEND}, 0 of 8 free"] == ["dp-node"]


def test_a_simulated_node_may_advertise_a_device_plugins_resource(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(
        "kind: SimulatedNode\nmetadata: {name: n}\n"
        f"spec: {{hardware: {{chip: 910B4, count: 1}}, allocatable: {{{ASCEND}: '2'}}}}\n"
        "---\nkind: Pod\nmetadata: {name: p, namespace: t}\n"
        f"spec: {{containers: [{{name: c, image: x, resources: {{limits: {{{ASCEND}: '2'}}}}}}]}}\n"
    )
    code, out, err = simulate("--scenario", str(path), "-o", "json", "--no-prepare")
    assert code == 0, err
    assert [p["node"] for p in json.loads(out)["pods"]] == ["n"]
