"""simulate with vNPUs (counters shown and allocated as kube-scheduler does with
DRAPartitionableDevices on) and with extended-resource pods (DRAExtendedResource): both gates
are off by default in v1.34.3, so every run here turns them on."""

import contextlib
import io
import json
import textwrap
from pathlib import Path
from typing import Any

from npu_dra.app.cli import main

GATES = ("--feature-gates", "DRAPartitionableDevices=true,DRAExtendedResource=true")

ATTR = 'device.attributes["npu.huawei.com"]'
CLASS = textwrap.dedent("""\
    kind: DeviceClass
    metadata: {name: npu.huawei.com}
    spec:
      selectors:
      - cel: {expression: 'device.driver == "npu.huawei.com"'}
    """)


def claim_pod(name: str, cel: str, count: int = 1) -> str:
    return textwrap.dedent(f"""\
        ---
        kind: ResourceClaim
        metadata: {{name: {name}, namespace: default}}
        spec:
          devices:
            requests:
            - name: npu
              exactly:
                deviceClassName: npu.huawei.com
                count: {count}
                selectors: [{{cel: {{expression: '{cel}'}}}}]
        ---
        kind: Pod
        metadata: {{name: {name}, namespace: default}}
        spec:
          containers: [{{name: c, image: x, resources: {{claims: [{{name: npu}}]}}}}]
          resourceClaims: [{{name: npu, resourceClaimName: {name}}}]
        """)


V134 = ("--kubernetes-version", "1.34")  # the gates below are set on v1.34.3


def simulate(tmp_path: Path, text: str, *args: str) -> tuple[int, str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            [
                "simulate",
                "--scenario",
                str(path),
                "--cdi-out",
                str(tmp_path / "cdi"),
                *V134,
                *GATES,
                *args,
            ]
        )
    return code, out.getvalue()


def pods(document: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    return {
        p["pod"]: (p["status"], sorted(d["device"] for ds in p["claims"].values() for d in ds))
        for p in document["pods"]
    }


ON_CHIP0 = f'{ATTR}.physicalId == 0 && "vnpuTemplate" in {ATTR} && {ATTR}.vnpuTemplate == '
VNPU_NODE = (
    "kind: SimulatedNode\nmetadata: {name: infer-1}\n"
    "spec: {hardware: {chip: 910B4, count: 2, vnpu: 910B4}}\n---\n"
    + CLASS
    + claim_pod("a", ON_CHIP0 + '"vir05_1c_8g"')
    + claim_pod("b", ON_CHIP0 + '"vir05_1c_8g"')
    + claim_pod("c", ON_CHIP0 + '"vir10_4c_16g_m"')
    + claim_pod("d", f'{ATTR}.physicalId == 0 && !("vnpuTemplate" in {ATTR})')
)


def test_vnpus_share_a_chip_until_its_counters_run_out(tmp_path: Path) -> None:
    code, out = simulate(tmp_path, VNPU_NODE, "-o", "json")
    assert code == 0
    document = json.loads(out)
    assert pods(document) == {
        "default/a": ("Bound", ["npu-0-vir05-1c-8g-0"]),
        "default/b": ("Bound", ["npu-0-vir05-1c-8g-1"]),
        "default/c": ("Pending", []),
        "default/d": ("Pending", []),
    }
    counter_sets = [s["spec"]["sharedCounters"][0]["name"] for s in document["resourceSlices"]]
    assert sorted(counter_sets) == ["npu-0-counters", "npu-1-counters"]
    nodes = [
        n["hostPath"]
        for spec in document["cdiSpecs"].values()
        for d in spec["devices"]
        for n in d["containerEdits"]["deviceNodes"]
    ]
    assert sorted(nodes) == ["/dev/vdavinci100", "/dev/vdavinci101"]


def test_the_table_shows_vnpus_and_counters_in_use(tmp_path: Path) -> None:
    code, out = simulate(tmp_path, VNPU_NODE)
    assert code == 0
    assert "  npu-0-vir05-1c-8g-0" in out
    assert "vir05_1c_8g of npu-0" in out
    counters = {tuple(line.split()[1:]) for line in out.splitlines() if "npu-0-counters" in line}
    assert ("npu-0-counters", "aicore", "20", "10") in counters
    assert ("npu-0-counters", "memory", "32Gi", "16Gi") in counters


EXTENDED = textwrap.dedent("""\
    kind: SimulatedNode
    metadata: {name: train-1}
    spec: {hardware: {chip: 910B4, count: 4}}
    ---
    kind: DeviceClass
    metadata: {name: ascend910}
    spec:
      selectors:
      - cel: {expression: 'device.driver == "npu.huawei.com"'}
      extendedResourceName: huawei.com/Ascend910
    ---
    kind: Pod
    metadata: {name: classic, namespace: default}
    spec:
      containers:
      - {name: c, image: x, resources: {limits: {huawei.com/Ascend910: 2, cpu: 1}}}
    ---
    kind: Pod
    metadata: {name: more, namespace: default}
    spec:
      containers:
      - {name: c, image: x, resources: {requests: {huawei.com/Ascend910: 2}}}
    ---
    kind: Pod
    metadata: {name: too-many, namespace: default}
    spec:
      containers:
      - {name: c, image: x, resources: {limits: {huawei.com/Ascend910: 1}}}
    ---
    kind: Pod
    metadata: {name: unmapped, namespace: default}
    spec:
      containers:
      - {name: c, image: x, resources: {limits: {huawei.com/Ascend310P: 1}}}
    """)


def test_extended_resource_pods_get_devices_of_the_mapped_class(tmp_path: Path) -> None:
    code, out = simulate(tmp_path, EXTENDED, "-o", "json")
    assert code == 0
    document = json.loads(out)
    decided = pods(document)
    assert decided["default/classic"] == ("Bound", ["npu-0", "npu-1"])
    assert decided["default/more"] == ("Bound", ["npu-2", "npu-3"])
    assert decided["default/too-many"] == ("Pending", [])
    (unmapped,) = [p for p in document["pods"] if p["pod"] == "default/unmapped"]
    assert unmapped["reason"] == "0/1 nodes are available: 1 Insufficient huawei.com/Ascend310P."
    (classic,) = [p for p in document["pods"] if p["pod"] == "default/classic"]
    (requests,) = classic["claims"].values()
    assert [r["request"] for r in requests] == ["container-0-request-1"] * 2  # after "cpu"


def many(name: str, count: int) -> str:
    return claim_pod(name, f'{ATTR}.physicalId == 0 && "vnpuTemplate" in {ATTR}', count)


def test_one_claim_cannot_take_more_vnpus_than_the_counters_hold(tmp_path: Path) -> None:
    node = (
        "kind: SimulatedNode\nmetadata: {name: infer-1}\n"
        "spec: {hardware: {chip: 910B4-1, count: 1, vnpu: 910B4-1}}\n---\n"
    )
    # 910B4-1: 20 AI cores; vir10_3c_32g x2 or vir05_1c_16g x4, any mix within 20 cores
    code, out = simulate(tmp_path, node + CLASS + many("five", 5) + many("four", 4), "-o", "json")
    assert code == 0
    decided = pods(json.loads(out))
    assert decided["default/five"] == ("Pending", [])
    status, devices = decided["default/four"]
    assert status == "Bound"
    assert len(devices) == 4


def test_a_choice_that_depends_on_the_slice_order_lists_the_other_choices(tmp_path: Path) -> None:
    """Two vNPU devices left on chip 0, four free on chip 1: walking chip 0's slice first takes
    two of each, walking chip 1's first takes four of chip 1; kube-scheduler walks them in
    random order, so both are listed."""
    anywhere = f'"vnpuTemplate" in {ATTR} && {ATTR}.vnpuTemplate == "vir05_1c_8g"'
    text = VNPU_NODE + claim_pod("four", anywhere, 4)
    code, out = simulate(tmp_path, text, "-o", "json")
    assert code == 0
    by_pod = {p["pod"]: p for p in json.loads(out)["pods"]}
    assert by_pod["default/a"]["otherChoices"] == []  # only chip 0 matches: one choice
    four = by_pod["default/four"]
    first = sorted(d["device"] for d in four["claims"]["four"])
    (other,) = four["otherChoices"]
    two_and_two = [f"npu-0-vir05-1c-8g-{i}" for i in (2, 3)] + [
        f"npu-1-vir05-1c-8g-{i}" for i in (0, 1)
    ]
    four_of_chip1 = [f"npu-1-vir05-1c-8g-{i}" for i in range(4)]
    assert sorted([first, sorted(other["four"])]) == sorted([two_and_two, four_of_chip1])
    code, table = simulate(tmp_path, text)
    assert f"(or {','.join(other['four'])})" in table
