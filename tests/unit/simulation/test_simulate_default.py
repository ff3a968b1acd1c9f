"""`npu-dra simulate` on its built-in scenario does what the issue's "Done when" asks.

Expectations come from the seed and the hardware, not from the program's output: two Atlas 800I A2
nodes of eight 910B4 (32 GiB each) whose NPUs sit on NUMA nodes [6, 6, 4, 4, 0, 0, 2, 2] by
physical id; the seed's NUMA claim asks for All devices with `numaNode == 6`, its template pod
for one NPU; an NPU's device node is /dev/davinci<physical id>.
"""

import contextlib
import io
import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from npu_dra.app.cli import main

LAYOUT = [6, 6, 4, 4, 0, 0, 2, 2]
SHARED = {"/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"}
SEED_ATTRIBUTES = {"chipName", "numaNode", "physicalId", "topologyGroup"}


def simulate(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", *args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    code, out, err = simulate("--output", "json")
    assert code == 0, err
    parsed: dict[str, Any] = json.loads(out)
    return parsed


def devices_by_node(document: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    found: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for item in document["resourceSlices"]:
        for device in item["spec"]["devices"]:
            assert device["name"] not in found[item["spec"]["nodeName"]], "device listed twice"
            found[item["spec"]["nodeName"]][device["name"]] = device
    return dict(found)


def rows_of(document: dict[str, Any], **match: str) -> list[dict[str, str]]:
    return [r for r in document["allocations"] if all(r[k] == v for k, v in match.items())]


def physical_id(document: dict[str, Any], node: str, device: str) -> int:
    value: int = devices_by_node(document)[node][device]["attributes"]["physicalId"]["int"]
    return value


def test_sixteen_devices_are_published_across_two_nodes(document: dict[str, Any]) -> None:
    nodes = devices_by_node(document)
    assert {n: len(d) for n, d in nodes.items()} == {"node-a": 8, "node-b": 8}
    for item in document["resourceSlices"]:
        assert item["kind"] == "ResourceSlice"
        assert item["apiVersion"] == "resource.k8s.io/v1"
        assert item["spec"]["driver"] == "npu.huawei.com"


def test_each_node_publishes_one_slice_at_generation_1_as_in_the_seed(
    document: dict[str, Any],
) -> None:
    pools = [(s["spec"]["nodeName"], s["spec"]["pool"]) for s in document["resourceSlices"]]
    assert sorted(pools, key=lambda p: p[0]) == [
        ("node-a", {"name": "node-a", "generation": 1, "resourceSliceCount": 1}),
        ("node-b", {"name": "node-b", "generation": 1, "resourceSliceCount": 1}),
    ]


def test_devices_carry_the_seeds_attributes_and_memory_capacity(document: dict[str, Any]) -> None:
    for devices in devices_by_node(document).values():
        for device in devices.values():
            attributes = device["attributes"]
            assert set(attributes) >= SEED_ATTRIBUTES
            assert attributes["chipName"] == {"string": "910B4"}
            assert set(attributes["numaNode"]) == {"int"}
            assert set(attributes["topologyGroup"]) == {"string"}
            assert device["capacity"]["memCapacity"] == {"value": "32Gi"}


def test_numa_nodes_follow_the_atlas_layout_by_physical_id(document: dict[str, Any]) -> None:
    for devices in devices_by_node(document).values():
        by_physical = {
            d["attributes"]["physicalId"]["int"]: d["attributes"]["numaNode"]["int"]
            for d in devices.values()
        }
        assert by_physical == dict(enumerate(LAYOUT))


def test_the_numa_claim_gets_every_npu_on_numa_node_6_of_one_node(
    document: dict[str, Any],
) -> None:
    rows = rows_of(document, claim="npu-numa-claim")
    assert {r["pod"] for r in rows} == {"ascend-dra/npu-numa-pod"}
    (node,) = {r["node"] for r in rows}
    on_numa_6 = {
        name
        for name, d in devices_by_node(document)[node].items()
        if d["attributes"]["numaNode"]["int"] == 6
    }
    assert sorted(r["device"] for r in rows) == sorted(on_numa_6) == ["npu-0", "npu-1"]
    assert {r["status"] for r in rows} == {"Prepared"}


def test_the_template_pod_gets_exactly_one_npu(document: dict[str, Any]) -> None:
    (row,) = rows_of(document, pod="ascend-dra/npu-pod")
    assert row["status"] == "Prepared"
    assert row["request"] == "npu"
    assert row["claim"].startswith("npu-pod-npu-")  # generated from the template
    assert row["device"] in devices_by_node(document)[row["node"]]


def test_no_device_is_given_to_two_claims(document: dict[str, Any]) -> None:
    taken = [(r["node"], r["device"]) for r in document["allocations"]]
    assert len(taken) == len(set(taken)) == 3


def claims_devices(document: dict[str, Any]) -> dict[str, tuple[str, set[str]]]:
    """claim name -> (node, allocated devices)."""
    claims: dict[str, tuple[str, set[str]]] = {}
    for row in document["allocations"]:
        claims.setdefault(row["claim"], (row["node"], set()))[1].add(row["device"])
    return claims


def spec_devices(uid: str, spec: dict[str, Any]) -> set[str]:
    names = [d["name"] for d in spec["devices"]]
    assert all(n.startswith(f"{uid}-") for n in names), names
    return {n.removeprefix(f"{uid}-") for n in names}


def test_one_cdi_spec_per_claim_names_exactly_its_devices(document: dict[str, Any]) -> None:
    specs = document["cdiSpecs"]
    claims = claims_devices(document)
    assert len(specs) == len(claims)
    for node, allocated in claims.values():
        (uid,) = [u for u, s in specs.items() if spec_devices(u, s) == allocated]
        spec = specs[uid]
        per_device = {
            n["path"] for d in spec["devices"] for n in d["containerEdits"]["deviceNodes"]
        }
        expected = {f"/dev/davinci{physical_id(document, node, d)}" for d in allocated}
        assert per_device == expected
        assert {n["path"] for n in spec["containerEdits"]["deviceNodes"]} == SHARED
        ids = sorted(physical_id(document, node, d) for d in allocated)
        assert spec["containerEdits"]["env"] == [
            f"ASCEND_VISIBLE_DEVICES={','.join(map(str, ids))}"
        ]
        assert spec["kind"] == "k8s.npu.huawei.com/npu"
        assert spec["cdiVersion"] == ("0.5.0" if uid[0].isdigit() else "0.3.0")


def test_yaml_output_is_the_same_document(document: dict[str, Any]) -> None:
    code, out, _ = simulate("--output", "yaml")
    assert code == 0
    assert yaml.safe_load(out) == document


def sections(text: str) -> Iterator[tuple[str, str]]:
    heading, body = "", []
    for line in text.splitlines():
        if line.startswith("# "):
            yield heading, "\n".join(body)
            heading, body = line, []
        else:
            body.append(line)
    yield heading, "\n".join(body)


def test_table_output_is_a_devices_table_and_a_pods_table(document: dict[str, Any]) -> None:
    code, out, _ = simulate()
    assert code == 0
    parts = dict(sections(out))
    devices_heading = next(h for h in parts if h.startswith("# Nodes and devices"))
    devices = parts[devices_heading].strip().splitlines()
    assert devices[0].split() == [
        "NODE",
        "DEVICE",
        "CHIP",
        "NUMA",
        "GROUP",
        "MEMORY",
        "HEALTH",
        "ALLOCATED-TO",
    ]
    published = sum(len(s["spec"]["devices"]) for s in document["resourceSlices"])
    assert len(devices) == 1 + published
    pods = parts["# Pods (in creation order)"].strip().splitlines()
    assert pods[0].split() == ["POD", "CLAIM", "NODE", "DEVICES", "STATUS"]
    assert [line.split()[-1] for line in pods[1:]] == ["Bound", "Bound"]


def test_cdi_root_receives_the_specs_as_files(document: dict[str, Any], tmp_path: Path) -> None:
    code, out, err = simulate("--output", "json", "--cdi-out", str(tmp_path))
    assert code == 0, err
    written = {
        path.name: json.loads(path.read_text()) for path in sorted(tmp_path.glob("*/*.json"))
    }
    assert written == {
        f"k8s.npu.huawei.com-npu_{uid}.json": spec
        for uid, spec in json.loads(out)["cdiSpecs"].items()
    }
    assert len(written) == len(document["cdiSpecs"])


def test_the_driver_name_flag_names_the_published_driver() -> None:
    code, out, _ = simulate("--output", "json", "--driver-name", "npu.example.com")
    assert code == 0
    result = json.loads(out)
    assert {s["spec"]["driver"] for s in result["resourceSlices"]} == {"npu.example.com"}
    # The built-in scenario's class and selectors follow the driver: its pods are bound as under
    # the default name, with CDI devices of the driver's vendor.
    assert not [r for r in result["allocations"] if r["status"].startswith("Pending")]
    kinds = {spec["kind"] for spec in result["cdiSpecs"].values()}
    assert kinds == {"k8s.npu.example.com/npu"}


def test_an_unhealthy_npu_is_listed_as_not_published(tmp_path: Path) -> None:
    path = tmp_path / "sick.yaml"
    path.write_text(
        "kind: SimulatedNode\nmetadata: {name: n}\n"
        "spec:\n  hardware: {chip: 910B4, count: 2, health: {1: Alarm}}\n"
    )
    code, out, _ = simulate("--scenario", str(path), "--kubernetes-version", "1.34")
    assert code == 0
    rows = [line.split() for line in out.splitlines() if line.startswith("n ")]
    assert [(r[1], r[6]) for r in rows] == [("npu-0", "Healthy"), ("npu-1", "Unhealthy")]
    assert "(not published)" in out
