"""`simulate --kubernetes-version/--feature-gates`: what the simulated API server keeps and the
scheduler does follow the version's gates, and every run says what it decided as."""

import contextlib
import io
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from npu_dra.app.cli import main

CLASS = textwrap.dedent("""\
    kind: DeviceClass
    metadata: {name: npu.huawei.com}
    spec:
      selectors:
      - cel: {expression: 'device.driver == "npu.huawei.com"'}
      extendedResourceName: huawei.com/Ascend910
    """)
ATTR = 'device.attributes["npu.huawei.com"]'
VNPU = f'"vnpuTemplate" in {ATTR} && {ATTR}.vnpuTemplate == "vir05_1c_8g"'


def pod(name: str, request: str) -> str:
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
                {request}
        ---
        kind: Pod
        metadata: {{name: {name}, namespace: default}}
        spec:
          containers: [{{name: c, image: x, resources: {{claims: [{{name: npu}}]}}}}]
          resourceClaims: [{{name: npu, resourceClaimName: {name}}}]
        """)


V134 = ("--kubernetes-version", "1.34")  # what these tests compare the later versions with


def simulate(
    tmp_path: Path, text: str, *args: str, version: tuple[str, ...] = V134
) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        argv = ["simulate", "--scenario", str(path), "--no-prepare", "-o", "json"]
        code = main([*argv, *version, *args])
    return code, json.loads(out.getvalue() or "{}"), err.getvalue()


def decided(document: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    return {
        p["pod"].split("/")[1]: (
            p["status"],
            sorted(d["device"] for ds in p["claims"].values() for d in ds),
        )
        for p in document["pods"]
    }


def published(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for s in document["resourceSlices"] for d in s["spec"]["devices"]}


def test_every_run_says_which_scheduler_it_decided_as(tmp_path: Path) -> None:
    node = "kind: SimulatedNode\nmetadata: {name: n}\nspec: {hardware: {chip: 910B4, count: 1}}\n"
    code, document, _ = simulate(tmp_path, node + "---\n" + CLASS, version=())
    assert code == 0
    assert document["decidedAs"]["kubernetesVersion"] == "v1.37.2"  # the current release
    code, document, _ = simulate(tmp_path, node + "---\n" + CLASS)
    assert document["decidedAs"]["kubernetesVersion"] == "v1.34.3"
    assert document["decidedAs"]["allocator"] == "experimental"
    assert document["decidedAs"]["featureGates"]["DRADeviceTaints"] is False
    code, document, _ = simulate(tmp_path, node, "--kubernetes-version", "1.36")
    assert document["decidedAs"]["kubernetesVersion"] == "v1.36.3"
    assert document["decidedAs"]["allocator"] == "incubating"
    path = tmp_path / "scenario.yaml"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(
            ["simulate", "--scenario", str(path), *V134, "--feature-gates", "DRADeviceTaints=true"]
        )
    assert (
        "# Decided as kube-scheduler v1.34.3 with gates DRADeviceTaints=true "
        "(experimental allocator)." in out.getvalue()
    )


VNPUS = (
    "kind: SimulatedNode\nmetadata: {name: n}\n"
    "spec: {hardware: {chip: 910B4, count: 1, vnpu: 910B4}}\n---\n"
    + CLASS
    + pod("small", f"selectors: [{{cel: {{expression: '{VNPU}'}}}}]")
)


@pytest.mark.parametrize(
    ("args", "counted"),
    [
        ((), False),
        (("--feature-gates", "DRAPartitionableDevices=true"), True),
        (("--kubernetes-version", "1.36"), True),
    ],
)
def test_vnpus_are_offered_only_where_the_version_keeps_shared_counters(
    tmp_path: Path, args: tuple[str, ...], counted: bool
) -> None:
    code, document, err = simulate(tmp_path, VNPUS, *args)
    assert code == 0, err
    counters = [s for s in document["resourceSlices"] if s["spec"].get("sharedCounters")]
    assert bool(counters) is counted
    assert decided(document)["small"][0] == ("Bound" if counted else "Pending")


EXTENDED = (
    "kind: SimulatedNode\nmetadata: {name: n}\nspec: {hardware: {chip: 910B4, count: 2}}\n---\n"
    + CLASS
    + textwrap.dedent("""\
        ---
        kind: Pod
        metadata: {name: classic, namespace: default}
        spec:
          containers: [{name: c, image: x, resources: {limits: {huawei.com/Ascend910: 1}}}]
        """)
)


def test_extended_resources_map_to_a_class_only_with_dra_extended_resource(
    tmp_path: Path,
) -> None:
    _, document, _ = simulate(tmp_path, EXTENDED)
    (classic,) = document["pods"]
    assert classic["status"] == "Pending"
    assert classic["reason"] == "0/1 nodes are available: 1 Insufficient huawei.com/Ascend910."
    _, document, _ = simulate(tmp_path, EXTENDED, "--kubernetes-version", "1.36")
    assert decided(document)["classic"] == ("Bound", ["npu-0"])


TOLERATING = "tolerations: [{key: npu.huawei.com/health, operator: Exists, effect: NoSchedule}]"
TAINTED = (
    "kind: SimulatedNode\nmetadata: {name: n}\n"
    "spec: {hardware: {chip: 910B4, count: 2, health: {0: Alarm}}}\n---\n"
    + CLASS
    + pod("every", "allocationMode: All")
    + pod("tolerating", TOLERATING)
    + pod("plain", "count: 1")
)


def test_an_unhealthy_chip_is_left_out_where_device_taints_are_off(tmp_path: Path) -> None:
    code, document, err = simulate(tmp_path, TAINTED)
    assert code == 0, err
    assert "npu-0" not in published(document)
    assert decided(document) == {
        "every": ("Bound", ["npu-1"]),
        "tolerating": ("Pending", []),
        "plain": ("Pending", []),
    }


def test_an_unhealthy_chip_is_tainted_and_only_tolerating_requests_take_it(
    tmp_path: Path,
) -> None:
    code, document, err = simulate(tmp_path, TAINTED, "--kubernetes-version", "1.36")
    assert code == 0, err
    (taint,) = published(document)["npu-0"]["taints"]
    assert (taint["key"], taint["effect"]) == ("npu.huawei.com/health", "NoSchedule")
    assert decided(document) == {
        "every": ("Pending", []),  # All: the tainted chip matches and is not tolerated
        "tolerating": ("Bound", ["npu-0"]),
        "plain": ("Bound", ["npu-1"]),
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--kubernetes-version", "1.30"), "--kubernetes-version: '1.30'"),
        (("--feature-gates", "DRANope=true"), "--feature-gates: DRANope is not a DRA gate"),
        (("--kubernetes-version", "1.36", "--feature-gates", "DRAAdminAccess=false"), "locked"),
    ],
)
def test_a_version_or_gate_it_cannot_decide_as_is_unusable(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    code, _, err = simulate(tmp_path, CLASS, *args)
    assert code == 2
    assert message in err


NUMA = 'device.attributes["npu.huawei.com"].numaNode'
NEAR_OR_FAR_CLAIM = textwrap.dedent(f"""\
    ---
    kind: ResourceClaimTemplate
    metadata: {{name: near-or-far, namespace: default}}
    spec:
      spec:
        devices:
          requests:
          - name: npu
            firstAvailable:
            - name: near
              deviceClassName: npu.huawei.com
              count: 2
              selectors: [{{cel: {{expression: '{NUMA} == 0'}}}}]
            - name: far
              deviceClassName: npu.huawei.com
              allocationMode: All
              selectors: [{{cel: {{expression: '{NUMA} == 1'}}}}]
    """)
NEAR_OR_FAR = (
    "kind: SimulatedNode\nmetadata: {name: n}\n"
    "spec: {hardware: {chip: 910B4, count: 4, numaNodes: [0, 0, 1, 1]}}\n---\n"
    + CLASS
    + NEAR_OR_FAR_CLAIM
    + "".join(
        textwrap.dedent(f"""\
            ---
            kind: Pod
            metadata: {{name: {name}, namespace: default}}
            spec:
              containers: [{{name: c, image: x, resources: {{claims: [{{name: npu}}]}}}}]
              resourceClaims: [{{name: npu, resourceClaimTemplateName: near-or-far}}]
            """)
        for name in ("first", "second")
    )
)


def test_an_all_subrequest_lists_its_own_devices_only_from_v1_36(tmp_path: Path) -> None:
    """v1.34.3 validates subrequest `far` under `near`'s index and lists `near`'s devices as its
    `All`; v1.36.3 lists its own (the differential test's first_available_numa scenario)."""
    _, document, err = simulate(tmp_path, NEAR_OR_FAR)
    assert decided(document) == {"first": ("Bound", ["npu-0", "npu-1"]), "second": ("Pending", [])}
    _, document, err = simulate(tmp_path, NEAR_OR_FAR, "--kubernetes-version", "1.36")
    assert decided(document)["second"] == ("Bound", ["npu-2", "npu-3"]), err


def test_simulate_runs_the_built_in_scenario_as_v1_37() -> None:
    import contextlib
    import io
    import json

    from npu_dra.app.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["simulate", "--kubernetes-version", "1.37", "--no-prepare", "-o", "json"])
    assert code == 0
    assert json.loads(out.getvalue())["decidedAs"]["kubernetesVersion"] == "v1.37.2"
