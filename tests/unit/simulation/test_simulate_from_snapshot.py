"""`simulate --from`: a cluster's state as kubectl prints it (snapshots/two-drivers.yaml: node-a
with 4 NPUs of which a running pod's claim holds npu-0 and npu-1, node-b cordoned, node-c with
2 GPUs of another driver, three pods pending), with a scenario's what-ifs on top."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.simulation.test_simulate_default import simulate

SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "two-drivers.yaml"
MORE_ROOM = """\
kind: SimulatedNode
metadata: {name: extra}
spec: {hardware: {chip: 910B4, count: 4}}
---
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: demo}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
---
kind: Pod
metadata: {name: what-if, namespace: demo}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: app, image: busybox}]
"""


def run(*args: str) -> dict[str, Any]:
    code, out, err = simulate("--from", str(SNAPSHOT), "-o", "json", *args)
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def pods(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["pod"]: p for p in document["pods"]}


def devices(document: dict[str, Any], pod: str) -> list[tuple[str, str, str]]:
    return sorted(
        (r["node"], r["device"], r["claim"])
        for r in document["allocations"]
        if r["pod"] == pod and r["device"] != "-"
    )


def test_pending_pods_are_scheduled_in_creation_order_around_what_is_held() -> None:
    document = run()
    decided = pods(document)
    # The running pod stays where it is, the finished one is gone: only pending pods are decided.
    assert list(decided) == ["demo/first", "demo/second", "demo/on-gpu"]
    # 3 NPUs: node-a has 2 free (its claim holds 2), node-b is cordoned.
    assert decided["demo/first"]["status"] == "Pending"
    assert decided["demo/first"]["reason"] == (
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 cannot allocate all claims."
    )
    # The controller had made second's claim already: it is used, not made again.
    assert devices(document, "demo/second") == [
        ("node-a", "npu-2", "second-npu-x7k2p"),
        ("node-a", "npu-3", "second-npu-x7k2p"),
    ]
    # Another driver's slices are scheduled on as they are.
    assert devices(document, "demo/on-gpu") == [("node-c", "gpu-0", "gpu-claim")]
    assert document["summary"].pop("refused") == 0
    assert document["summary"] == {"pods": 3, "bound": 2, "pending": 1, "gated": 0, "error": 0}


def test_the_devices_table_shows_what_the_clusters_claims_hold() -> None:
    code, out, err = simulate("--from", str(SNAPSHOT))
    assert code == 0, err
    rows = [line.split() for line in out.splitlines() if line.startswith("node-a")]
    held = {row[1]: " ".join(row[7:]) for row in rows}
    assert held == {
        "npu-0": "claim demo/held",
        "npu-1": "claim demo/held",
        "npu-2": "demo/second",
        "npu-3": "demo/second",
    }


def test_a_scenario_on_top_adds_room_and_pods(tmp_path: Path) -> None:
    overlay = tmp_path / "what-if.yaml"
    overlay.write_text(MORE_ROOM)
    document = run("--scenario", str(overlay))
    decided = pods(document)
    assert decided["demo/first"]["node"] == "extra"
    assert [d for _, d, _ in devices(document, "demo/first")] == ["npu-0", "npu-1", "npu-2"]
    assert devices(document, "demo/what-if")[0][:2] == ("node-c", "gpu-1")
    assert list(decided)[-1] == "demo/what-if"  # after the snapshot's pending pods


def test_the_devices_table_lists_the_snapshots_nodes_beside_the_scenarios(
    tmp_path: Path,
) -> None:
    overlay = tmp_path / "what-if.yaml"
    overlay.write_text(MORE_ROOM)
    code, out, err = simulate("--from", str(SNAPSHOT), "--scenario", str(overlay))
    assert code == 0, err
    table = out.split("# Pods")[0]
    listed = {tuple(line.split()[:2]) for line in table.splitlines()[2:] if line.strip()}
    assert {("node-a", "npu-0"), ("node-c", "gpu-1"), ("extra", "npu-3")} <= listed
    held = {line.split()[1]: line.split()[-1] for line in table.splitlines() if "node-a" in line}
    assert held["npu-0"] == "demo/held"


def test_kubectls_json_reads_the_same(tmp_path: Path) -> None:
    as_json = tmp_path / "snapshot.json"
    as_json.write_text(json.dumps(yaml.safe_load(SNAPSHOT.read_text())))
    code, out, err = simulate("--from", str(as_json), "-o", "json")
    assert code == 0, err
    assert json.loads(out)["allocations"] == run()["allocations"]


SERVICES = """\
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: demo}
  spec: {ports: [{port: 80}], selector: {app: web}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: demo}
  spec: {replicas: 1}
- apiVersion: v1
  kind: Service
  metadata: {name: kubernetes, namespace: default}
"""


def test_kinds_simulate_does_not_use_are_skipped_and_named_once(tmp_path: Path) -> None:
    # what `kubectl get all` adds: Services, Deployments; the rest decides as without them
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(SNAPSHOT.read_text().rstrip("\n") + "\n" + SERVICES)
    code, out, err = simulate("--from", str(snapshot), "-o", "json")
    assert code == 0, err
    assert json.loads(out)["allocations"] == run()["allocations"]
    note = "skipped 1 Deployment, 2 Service: kinds simulate does not use"
    assert err.count(note) == 1, err
    assert err.count("skipped") == 1, err


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (("    - {name: npu-0, attributes:", "    - {name: npu-0, atributes:"), "atributes"),
        (("  kind: Node\n  metadata:\n    name: node-c", "  metadata:\n    name: node-c"), "kind"),
        (
            ("    unschedulable: true", "    unschedulable: true\n    unshedulable: true"),
            "unshedulable",
        ),
    ],
)
def test_a_snapshot_is_decoded_strictly(
    tmp_path: Path, change: tuple[str, str], complaint: str
) -> None:
    text = SNAPSHOT.read_text()
    assert change[0] in text
    broken = tmp_path / "snapshot.yaml"
    broken.write_text(text.replace(change[0], change[1], 1))
    code, _, err = simulate("--from", str(broken))
    assert code == 2
    assert complaint in err
    assert str(broken) in err


def test_generate_goes_alone() -> None:
    code, _, err = simulate("--from", str(SNAPSHOT), "--generate", "nodes=2")
    assert code == 2
    assert "--generate" in err


def test_cordon_remove_and_unhealthy_flags_change_the_snapshot_before_scheduling() -> None:
    # node-a cordoned: second (2 NPUs) has nowhere to go; the GPU pod still fits on node-c.
    cordoned = pods(run("--cordon", "node-a", "--explain"))
    assert cordoned["demo/second"]["status"] == "Pending"
    # NodeUnschedulable runs before TaintToleration (kube-scheduler v1.34.3,
    # plugins/nodeunschedulable/node_unschedulable.go): its words, not the taint's.
    assert "2 node(s) were unschedulable" in cordoned["demo/second"]["reason"]
    assert {"reason": "the node is unschedulable (cordoned)", "nodes": ["node-a", "node-b"]} in (
        cordoned["demo/second"]["explain"]
    )
    assert cordoned["demo/on-gpu"]["node"] == "node-c"
    # node-c removed: the GPU pod is left pending, nothing else changes.
    removed = run("--remove-node", "node-c")
    assert pods(removed)["demo/on-gpu"]["status"] == "Pending"
    assert not [s for s in removed["resourceSlices"] if s["spec"]["nodeName"] == "node-c"]
    # gpu-0 failed: the GPU pod takes gpu-1.
    unhealthy = run("--unhealthy", "node-c/gpu-0")
    assert devices(unhealthy, "demo/on-gpu") == [("node-c", "gpu-1", "gpu-claim")]
    # npu-2 and npu-3 of node-a failed: second has no two free NPUs left (node-b is cordoned).
    short = pods(run("--unhealthy", "node-a/npu-3,node-a/npu-2"))
    assert short["demo/second"]["status"] == "Pending"


def test_with_every_node_removed_pods_get_the_schedulers_no_nodes_words() -> None:
    document = run("--remove-node", "node-a,node-b,node-c", "--explain")
    for pod in document["pods"]:
        assert pod["status"] == "Pending"
        assert pod["reason"] == "no nodes available to schedule pods"
        assert pod["explain"] == [{"reason": "no nodes available to schedule pods", "nodes": []}]


@pytest.mark.parametrize(
    ("flag", "complaint"),
    [
        ("--cordon=node-x", "--cordon node-x"),
        ("--remove-node=node-a,node-y", "--remove-node node-y"),
        ("--unhealthy=node-a/npu-9", "--unhealthy node-a/npu-9"),
        ("--unhealthy=node-a", "expected NODE/DEVICE"),
    ],
)
def test_a_what_if_naming_nothing_in_the_snapshot_is_refused(flag: str, complaint: str) -> None:
    code, _, err = simulate("--from", str(SNAPSHOT), flag)
    assert code == 2
    assert complaint in err


def test_what_if_flags_need_a_snapshot() -> None:
    code, _, err = simulate("--cordon", "node-a")
    assert code == 2
    assert "need --from" in err


def test_a_json_array_of_objects_reads_as_documents(tmp_path: Path) -> None:
    items = yaml.safe_load(SNAPSHOT.read_text())["items"]
    as_array = tmp_path / "snapshot.json"
    as_array.write_text(json.dumps(items))
    code, out, err = simulate("--from", str(as_array), "-o", "json")
    assert code == 0, err
    assert json.loads(out)["allocations"] == run()["allocations"]
