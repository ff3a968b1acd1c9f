"""A user scenario: a 910 A+X training node, whose eight NPUs form two HCCS rings of four
(npu-0..3 and npu-4..7), and claims that must stay within one ring."""

import contextlib
import io
import json
import textwrap
from pathlib import Path
from typing import Any

from npu_dra.app.cli import main

RING = {f"npu-{i}": f"ring-{i // 4}" for i in range(8)}  # 910 A+X: HCCS rings of four

SCENARIO = textwrap.dedent("""\
    kind: SimulatedNode
    metadata: {name: ax-1}
    spec:
      hardware: {chip: 910ProB, count: 8, topology: rings}
    ---
    kind: DeviceClass
    metadata: {name: npu.huawei.com}
    spec:
      selectors:
      - cel: {expression: 'device.driver == "npu.huawei.com"'}
    ---
    kind: ResourceClaim
    metadata: {name: single, namespace: team}
    spec:
      devices:
        requests:
        - name: npu
          exactly: {deviceClassName: npu.huawei.com}
    ---
    kind: ResourceClaim
    metadata: {name: one-ring, namespace: team}
    spec:
      devices:
        requests:
        - name: npu
          exactly: {deviceClassName: npu.huawei.com, count: 4}
        constraints:
        - matchAttribute: npu.huawei.com/topologyGroup
    ---
    kind: ResourceClaim
    metadata: {name: five-in-a-ring, namespace: team}
    spec:
      devices:
        requests:
        - name: npu
          exactly: {deviceClassName: npu.huawei.com, count: 5}
        constraints:
        - matchAttribute: npu.huawei.com/topologyGroup
    ---
    kind: Pod
    metadata: {name: first, namespace: team}
    spec:
      resourceClaims: [{name: npu, resourceClaimName: single}]
      containers: [{name: app, image: busybox}]
    ---
    kind: Pod
    metadata: {name: trainer, namespace: team}
    spec:
      resourceClaims: [{name: npu, resourceClaimName: one-ring}]
      containers: [{name: app, image: busybox}]
    ---
    kind: Pod
    metadata: {name: too-big, namespace: team}
    spec:
      resourceClaims: [{name: npu, resourceClaimName: five-in-a-ring}]
      containers: [{name: app, image: busybox}]
    """)


def simulate(path: Path) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--scenario", str(path), "--output", "json"])
    assert code == 0, err.getvalue()
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def rows(document: dict[str, Any], pod: str) -> list[dict[str, str]]:
    return [r for r in document["allocations"] if r["pod"] == pod]


def test_the_rings_are_published_as_topology_groups(tmp_path: Path) -> None:
    path = tmp_path / "ax.yaml"
    path.write_text(SCENARIO)
    (only,) = simulate(path)["resourceSlices"]
    published = {
        d["name"]: d["attributes"]["topologyGroup"]["string"] for d in only["spec"]["devices"]
    }
    assert published == RING


def test_a_ring_constrained_claim_gets_four_devices_of_one_ring(tmp_path: Path) -> None:
    path = tmp_path / "ax.yaml"
    path.write_text(SCENARIO)
    document = simulate(path)
    (first,) = rows(document, "team/first")
    trainer = rows(document, "team/trainer")
    assert len(trainer) == 4
    assert {r["status"] for r in trainer} == {"Prepared"}
    groups = {RING[r["device"]] for r in trainer}
    assert len(groups) == 1
    # The first pod's NPU leaves only three free in its ring, so four must come from the other.
    assert first["device"] not in {r["device"] for r in trainer}
    assert groups != {RING[first["device"]]}


def test_an_unsatisfiable_claim_is_pending_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "ax.yaml"
    path.write_text(SCENARIO)
    document = simulate(path)
    (row,) = rows(document, "team/too-big")
    assert row["claim"] == "five-in-a-ring"
    assert row["node"] == "-"
    assert row["status"].startswith("Pending: ")
    assert row["status"] == "Pending: 0/1 nodes are available: 1 cannot allocate all claims."
    assert len(document["cdiSpecs"]) == 2  # the pending claim was not prepared
