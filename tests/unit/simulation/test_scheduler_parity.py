"""Cases where simulate once decided otherwise than kube-scheduler v1.34.3 (issue #29)."""

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from npu_dra.app.cli import main

CLASS = """\
kind: DeviceClass
metadata: {name: npu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "npu.huawei.com"'}
"""

# vNPUs need shared counters: DRAPartitionableDevices, off in v1.34.3 by default
PARTITIONS = ("--kubernetes-version", "1.34", "--feature-gates", "DRAPartitionableDevices=true")


def simulate(tmp_path: Path, text: str, *args: str) -> dict[str, dict[str, Any]]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--scenario", str(path), "-o", "json", "--no-prepare", *args])
    assert code == 0, err.getvalue()
    return {p["pod"]: p for p in json.loads(out.getvalue())["pods"]}


def devices(pod: dict[str, Any]) -> list[tuple[str, str]]:
    """(request, device) for each device of the pod's only claim."""
    (results,) = pod["claims"].values()
    return sorted((d["request"], d["device"]) for d in results)


FIRST_AVAILABLE = f"""\
kind: SimulatedNode
metadata: {{name: a}}
spec:
  hardware: {{chip: 910B4, count: 4, numaNodes: [0, 0, 1, 1]}}
---
{CLASS}---
kind: ResourceClaimTemplate
metadata: {{name: near-or-far, namespace: t}}
spec:
  spec:
    devices:
      requests:
      - name: npu
        firstAvailable:
        - name: near
          deviceClassName: npu
          count: 2
          selectors:
          - cel: {{expression: 'device.attributes["npu.huawei.com"].numaNode == 0'}}
        - name: far
          deviceClassName: npu
          allocationMode: All
          selectors:
          - cel: {{expression: 'device.attributes["npu.huawei.com"].numaNode == 1'}}
---
kind: Pod
metadata: {{name: first, namespace: t}}
spec:
  resourceClaims: [{{name: npu, resourceClaimTemplateName: near-or-far}}]
  containers: [{{name: app, image: busybox}}]
"""


def test_a_first_available_subrequest_gets_only_devices_its_selector_accepts(
    tmp_path: Path,
) -> None:
    pods = simulate(tmp_path, FIRST_AVAILABLE)
    first = pods["t/first"]
    assert first["status"] == "Bound"
    assert devices(first) == [("npu/near", "npu-0"), ("npu/near", "npu-1")]  # NUMA 0


def _node(name: str, side: str) -> str:
    return (
        f"kind: SimulatedNode\nmetadata: {{name: {name}, labels: {{side: {side}}}}}\n"
        "spec:\n  hardware: {chip: 910B4, count: 2}\n"
    )


def _claim(name: str) -> str:
    return (
        f"kind: ResourceClaim\nmetadata: {{name: {name}, namespace: t}}\nspec:\n  devices:\n"
        "    requests:\n    - {name: npu, exactly: {deviceClassName: npu}}\n"
    )


def _pod(name: str, claims: list[str], side: str | None = None) -> str:
    selector = f"  nodeSelector: {{side: {side}}}\n" if side else ""
    refs = ", ".join(f"{{name: {c}, resourceClaimName: {c}}}" for c in claims)
    return (
        f"kind: Pod\nmetadata: {{name: {name}, namespace: t}}\nspec:\n{selector}"
        f"  resourceClaims: [{refs}]\n  containers: [{{name: app, image: busybox}}]\n"
    )


def test_a_pod_whose_allocated_claims_are_on_different_nodes_stays_pending(
    tmp_path: Path,
) -> None:
    documents = [
        _node("a", "left"),
        _node("b", "right"),
        CLASS,
        _claim("left"),
        _claim("right"),
        _pod("on-left", ["left"], "left"),
        _pod("on-right", ["right"], "right"),
        _pod("both", ["left", "right"]),
    ]
    pods = simulate(tmp_path, "---\n".join(documents))
    assert (pods["t/on-left"]["node"], pods["t/on-right"]["node"]) == ("a", "b")
    assert pods["t/both"]["status"] == "Pending"
    assert pods["t/both"]["reason"] == (
        "0/2 nodes are available: 2 resourceclaim not available on the node."
    )


def test_a_pod_whose_allocated_claims_share_a_node_goes_there(tmp_path: Path) -> None:
    documents = [
        _node("a", "left"),
        _node("b", "right"),
        CLASS,
        _claim("one"),
        _claim("two"),
        _pod("first", ["one"], "right"),
        _pod("second", ["two"], "right"),
        _pod("both", ["one", "two"]),
    ]
    pods = simulate(tmp_path, "---\n".join(documents))
    assert (pods["t/both"]["node"], pods["t/both"]["status"]) == ("b", "Bound")


TEMPLATE = 'device.attributes["npu.huawei.com"].vnpuTemplate'
PAIRED = f"""\
kind: SimulatedNode
metadata: {{name: p}}
spec:
  hardware: {{chip: 910B4, count: 1, vnpu: 910B4}}
---
{CLASS}---
kind: ResourceClaim
metadata: {{name: paired, namespace: t}}
spec:
  devices:
    requests:
    - name: a
      exactly:
        deviceClassName: npu
        selectors:
        - cel: {{expression: '"vnpuTemplate" in device.attributes["npu.huawei.com"]'}}
        - cel: {{expression: '{TEMPLATE}.startsWith("vir10_3c_16g")'}}
    - name: b
      exactly:
        deviceClassName: npu
        selectors:
        - cel: {{expression: '"vnpuTemplate" in device.attributes["npu.huawei.com"]'}}
        - cel: {{expression: '{TEMPLATE} == "vir10_3c_16g_nm"'}}
    constraints:
    - {{matchAttribute: npu.huawei.com/vnpuTemplate}}
---
kind: Pod
metadata: {{name: paired, namespace: t}}
spec:
  resourceClaims: [{{name: npu, resourceClaimName: paired}}]
  containers: [{{name: app, image: busybox}}]
"""


def test_a_partition_that_fails_a_constraint_keeps_its_counters_as_in_v1_34_3(
    tmp_path: Path,
) -> None:
    """a takes vir10-3c-16g-0, b's nm-0 passes the counters and fails the constraint: v1.34.3
    keeps nm-0's counters for the rest of the search, so the pair nm-0 + nm-1 no longer fits."""
    paired = simulate(tmp_path, PAIRED, *PARTITIONS)["t/paired"]
    assert paired["status"] == "Pending"
    assert paired["reason"].startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    assert "(on 1 node(s) decided as kube-scheduler v1.34.3 does" in paired["reason"]
    assert "does not give back the shared counters" in paired["reason"]


def test_no_counter_note_where_the_kept_counters_change_nothing(tmp_path: Path) -> None:
    text = PAIRED.replace('startsWith("vir10_3c_16g")', 'endsWith("_nm")')
    paired = simulate(tmp_path, text, *PARTITIONS)["t/paired"]
    assert (paired["status"], paired["reason"]) == ("Bound", None)
    assert devices(paired) == [("a", "npu-0-vir10-3c-16g-nm-0"), ("b", "npu-0-vir10-3c-16g-nm-1")]
