"""`distinctAttribute` with DRAConsumableCapacity off, as v1.34.3 handles it: the API server keeps
the field (its dropDisabled... loop sets it on a copy of each constraint) and checks it as a
fully qualified name; the allocator the scheduler runs with its default gates (the experimental
variant) uses it where `matchAttribute` is unset, but compares values by pointer, so a device
must have the attribute and values may repeat. Beside `matchAttribute` it is ignored.
"""

import contextlib
import io
import json
import textwrap
from pathlib import Path
from typing import Any

from npu_dra.app.cli import main

SCENARIO = """\
kind: SimulatedNode
metadata: {name: node-a}
spec:
  hardware: {chip: 910B4, count: 4, numaNodes: [0, 0, 1, 1]}
---
kind: DeviceClass
metadata: {name: npu.huawei.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "npu.huawei.com"'}
---
"""


def decide(tmp_path: Path, constraint: str) -> tuple[int, dict[str, Any], str]:
    documents = textwrap.dedent(f"""\
        kind: ResourceClaim
        metadata: {{name: c, namespace: demo}}
        spec:
          devices:
            requests:
            - {{name: npu, exactly: {{deviceClassName: npu.huawei.com, count: 2}}}}
            constraints:
            - {constraint}
        ---
        kind: Pod
        metadata: {{name: p, namespace: demo}}
        spec:
          resourceClaims: [{{name: npu, resourceClaimName: c}}]
          containers: [{{name: app, image: busybox}}]
        """)
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO + documents)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        argv = ["simulate", "--scenario", str(path), "--no-prepare", "-o", "json"]
        code = main([*argv, "--kubernetes-version", "1.34"])
    return code, json.loads(out.getvalue()), err.getvalue()


def devices(decided: dict[str, Any]) -> list[str]:
    return [d["device"] for d in decided["claims"]["c"]]


def test_distinct_attribute_alone_lets_values_repeat_as_the_scheduler_does(
    tmp_path: Path,
) -> None:
    code, document, err = decide(tmp_path, "{distinctAttribute: npu.huawei.com/numaNode}")
    assert code == 0, err
    assert document["refused"] == []
    (decided,) = document["pods"]
    assert decided["node"] == "node-a"
    assert devices(decided) == ["npu-0", "npu-1"]  # both on NUMA node 0
    assert (
        "distinctAttribute npu.huawei.com/numaNode: decided as kube-scheduler"
        in (decided["reason"])
    )


def test_distinct_attribute_alone_needs_the_attribute_on_each_device(tmp_path: Path) -> None:
    code, document, err = decide(tmp_path, "{distinctAttribute: npu.huawei.com/rack}")
    assert code == 0, err
    (decided,) = document["pods"]
    assert decided["status"] == "Pending"
    assert decided["reason"].startswith("0/1 nodes are available: 1 cannot allocate all claims.")


def test_distinct_attribute_beside_match_attribute_is_ignored(tmp_path: Path) -> None:
    code, document, err = decide(
        tmp_path,
        "{matchAttribute: npu.huawei.com/numaNode, distinctAttribute: npu.huawei.com/numaNode}",
    )
    assert code == 0, err
    (decided,) = document["pods"]
    assert decided["node"] == "node-a"
    assert devices(decided) == ["npu-0", "npu-1"]


def test_distinct_attribute_without_a_domain_is_refused_as_the_api_server_does(
    tmp_path: Path,
) -> None:
    code, document, _ = decide(tmp_path, "{distinctAttribute: numaNode}")
    assert code == 4
    (refusal,) = document["refused"]
    assert refusal["field"] == "spec.devices.constraints[0].distinctAttribute"
    assert document["pods"][0]["reason"].startswith("resourceclaim demo/c not found")
