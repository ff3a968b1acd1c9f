"""Which extended resource names DRA serves, per kube-scheduler version.

v1.34.3 (DRAExtendedResource on): a class maps its extendedResourceName, or without one its
implicit `deviceclass.resource.kubernetes.io/<class>`; the DRA plugin serves only names
IsExtendedResourceName accepts, so an implicit name is never given devices (a mapped one is
skipped by NodeResourcesFit too, an unmapped one is Insufficient).
v1.36.3: every class maps both names (k8s.io/dynamic-resource-allocation v0.36.3
deviceclass/extendedresourcecache), and the DRA plugin serves implicit names too
(pkg/scheduler/util/utils.go IsDRAExtendedResourceName); where two classes name one
extendedResourceName the newer class wins, the lower name on a tie."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from tests.unit.simulation.test_vnpu_and_extended import simulate

SCENARIO = textwrap.dedent("""\
    kind: SimulatedNode
    metadata: {name: n}
    spec: {hardware: {chip: 910B4, count: 4}}
    ---
    kind: DeviceClass
    metadata: {name: named, creationTimestamp: '2026-01-01T00:00:00Z'}
    spec:
      selectors: [{cel: {expression: 'device.driver == "npu.huawei.com"'}}]
      extendedResourceName: example.com/npu
    ---
    kind: DeviceClass
    metadata: {name: newer, creationTimestamp: '2026-01-02T00:00:00Z'}
    spec:
      selectors: [{cel: {expression: 'device.driver == "npu.huawei.com"'}}]
      extendedResourceName: example.com/npu
    ---
    kind: Pod
    metadata: {name: implicit, namespace: t}
    spec:
      containers:
      - {name: c, image: x, resources: {limits: {deviceclass.resource.kubernetes.io/named: 1}}}
    ---
    kind: Pod
    metadata: {name: explicit, namespace: t}
    spec:
      containers:
      - {name: c, image: x, resources: {limits: {example.com/npu: 1}}}
    """)


def _decided(tmp_path: Path, *args: str) -> dict[str, dict[str, Any]]:
    code, out = simulate(tmp_path, SCENARIO, "-o", "json", "--no-prepare", *args)
    assert code == 0, out
    return {p["pod"]: p for p in json.loads(out)["pods"]}


def _classes(pod: dict[str, Any]) -> list[str]:
    return [r["device"] for results in pod["claims"].values() for r in results]


def test_v136_serves_implicit_names_even_for_a_class_with_an_explicit_one(tmp_path: Path) -> None:
    pods = _decided(tmp_path, "--kubernetes-version", "1.36")
    assert pods["t/implicit"]["node"] == "n"
    assert len(_classes(pods["t/implicit"])) == 1  # a device, through DRA
    assert pods["t/explicit"]["node"] == "n"
    assert len(_classes(pods["t/explicit"])) == 1


def test_v134_leaves_an_implicit_name_to_node_resources_fit(tmp_path: Path) -> None:
    pods = _decided(
        tmp_path, "--kubernetes-version", "1.34", "--feature-gates", "DRAExtendedResource=true"
    )
    # class `named` has an explicit name: its implicit one maps nothing, no node offers it
    assert pods["t/implicit"]["node"] is None
    assert pods["t/implicit"]["reason"] == (
        "0/1 nodes are available: 1 Insufficient deviceclass.resource.kubernetes.io/named."
    )
    assert len(_classes(pods["t/explicit"])) == 1
