"""`simulate --from` on a cluster whose chips are shared by consumable capacity: node-a publishes
two 32Gi chips with allowMultipleAllocations; a running pod's claim holds a 24Gi share of npu-0
(its status has the shareID and consumedCapacity the scheduler wrote). Pending pods, in
creation order: `fits` asks 8Gi (the rest of npu-0), `rounded` asks 5.5Gi (6Gi: the policy's
step), `whole` asks nothing (all of a chip: none is left whole), `large` asks 20Gi (npu-1 has
26Gi left: fits), `last` asks 8Gi (nothing has 8Gi left)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.simulation.test_simulate_default import simulate

POLICY = (
    "{memCapacity: {value: 32Gi, "
    "requestPolicy: {default: 32Gi, validRange: {min: 1Gi, step: 1Gi}}}}"
)


def pending(name: str, minute: int, asked: str) -> str:
    capacity = f", capacity: {{requests: {{memCapacity: {asked}}}}}" if asked else ""
    return f"""\
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {{name: {name}, namespace: demo, uid: c2000000-0000-4000-8000-0000000000{minute:02d}}}
  spec:
    devices:
      requests: [{{name: npu, exactly: {{deviceClassName: npu{capacity}}}}}]
- apiVersion: v1
  kind: Pod
  metadata: {{name: {name}, namespace: demo, creationTimestamp: "2026-11-24T10:{minute:02d}:00Z"}}
  spec:
    resourceClaims: [{{name: npu, resourceClaimName: {name}}}]
    containers: [{{name: app, image: busybox}}]
  status: {{phase: Pending}}
"""


SNAPSHOT = f"""\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {{name: node-a, labels: {{kubernetes.io/hostname: node-a}}}}
  status: {{capacity: {{cpu: "96", memory: 1Ti, pods: "110"}}}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {{name: node-a-npu}}
  spec:
    driver: npu.example
    nodeName: node-a
    pool: {{name: node-a, generation: 1, resourceSliceCount: 1}}
    devices:
    - {{name: npu-0, allowMultipleAllocations: true, capacity: {POLICY}}}
    - {{name: npu-1, allowMultipleAllocations: true, capacity: {POLICY}}}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {{name: npu}}
  spec: {{selectors: [{{cel: {{expression: device.driver == "npu.example"}}}}]}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {{name: held, namespace: demo, uid: c1000000-0000-4000-8000-000000000001}}
  spec:
    devices:
      requests:
      - name: npu
        exactly: {{deviceClassName: npu, capacity: {{requests: {{memCapacity: 24Gi}}}}}}
  status:
    allocation:
      devices:
        results:
        - {{request: npu, driver: npu.example, pool: node-a, device: npu-0,
            shareID: 0d5f7e6a-1b7c-4c1e-9a51-2d8e4f3b6a10, consumedCapacity: {{memCapacity: 24Gi}}}}
    reservedFor: [{{resource: pods, name: running, uid: 90000000-0000-4000-8000-000000000001}}]
- apiVersion: v1
  kind: Pod
  metadata: {{name: running, namespace: demo, uid: 90000000-0000-4000-8000-000000000001}}
  spec:
    nodeName: node-a
    resourceClaims: [{{name: npu, resourceClaimName: held}}]
    containers: [{{name: app, image: busybox}}]
  status: {{phase: Running}}
{pending("fits", 1, "8Gi")}{pending("rounded", 2, "5632Mi")}{pending("whole", 3, "")}\
{pending("large", 4, "20Gi")}{pending("last", 5, "8Gi")}"""


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("consumable") / "snapshot.yaml"
    path.write_text(SNAPSHOT)
    return path


def decided(snapshot: Path, *args: str) -> dict[str, dict[str, Any]]:
    code, out, err = simulate("--from", str(snapshot), "-o", "json", "--explain", *args)
    assert code == 0, err
    return {p["pod"].split("/")[1]: p for p in json.loads(out)["pods"]}


def shares(pod: dict[str, Any]) -> list[tuple[str, str]]:
    [results] = pod["claims"].values()
    return [(r["device"], r["consumedCapacity"]["memCapacity"]) for r in results]


def test_shares_take_what_the_snapshots_claims_left_as_v136_decides(snapshot: Path) -> None:
    pods = decided(snapshot, "--kubernetes-version", "1.36")
    assert shares(pods["fits"]) == [("npu-0", "8Gi")]
    assert shares(pods["rounded"]) == [("npu-1", "6Gi")]
    assert pods["whole"]["status"] == "Pending"
    assert shares(pods["large"]) == [("npu-1", "20Gi")]
    assert pods["last"]["status"] == "Pending"
    assert pods["last"]["reason"] == "0/1 nodes are available: 1 cannot allocate all claims."
    ids = {p["claims"][name][0]["shareID"] for name, p in pods.items() if p["node"]}
    assert len(ids) == 3


def test_explain_names_the_capacity_left(snapshot: Path) -> None:
    pods = decided(snapshot, "--kubernetes-version", "1.36")
    [whole] = pods["whole"]["explain"]
    assert whole["reason"] == (
        "claim demo/whole, request npu: 2 device(s) match class npu, 2 of them free, 0 with the "
        "capacity asked left (memCapacity not asked, so its default 32Gi taken: 0 of 32Gi left "
        "on device npu-0), 1 needed"
    )
    [last] = pods["last"]["explain"]
    assert "memCapacity 8Gi asked: 0 of 32Gi left on device npu-0" in last["reason"]


def test_without_the_gate_a_share_holds_its_chip_whole(snapshot: Path) -> None:
    """v1.34.3's default: the server drops sharing from the slice and capacity from the
    claims, and the scheduler counts the held share as the whole of npu-0."""
    pods = decided(snapshot, "--kubernetes-version", "1.34")
    placed = {name: [r["device"] for r in p["claims"][name]] for name, p in pods.items()}
    assert placed == {"fits": ["npu-1"], "rounded": [], "whole": [], "large": [], "last": []}
    assert all("shareID" not in r for p in pods.values() for c in p["claims"].values() for r in c)


def test_the_pods_table_shows_each_share_and_the_document_says_whose_ids_they_are(
    snapshot: Path,
) -> None:
    code, out, err = simulate("--from", str(snapshot), "--kubernetes-version", "1.36")
    assert code == 0, err
    assert "npu-0 (share: memCapacity=8Gi)" in out
    code, out, err = simulate("--from", str(snapshot), "--kubernetes-version", "1.36", "-o", "json")
    assert "random UUID" in json.loads(out)["decidedAs"]["shareIDs"]
