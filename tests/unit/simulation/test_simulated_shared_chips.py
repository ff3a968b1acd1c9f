"""Shared chips in `simulate`: a SimulatedNode's `sharedChips`/`chipShares` (or simulate's
--shared-chips/--chip-shares, for nodes that say nothing) publish through the plugin's own
publisher: fixed shares where the simulated version does not serve consumable capacity, one
multi-allocatable device where it does (1.36, or DRAConsumableCapacity=true)."""

from __future__ import annotations

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
    """)
SHARED = '"shared" in device.attributes["npu.huawei.com"]'
POD = textwrap.dedent(f"""\
    kind: ResourceClaimTemplate
    metadata: {{name: share, namespace: default}}
    spec:
      spec:
        devices:
          requests:
          - name: npu
            exactly:
              deviceClassName: npu.huawei.com
              selectors: [{{cel: {{expression: '{SHARED}'}}}}]
    ---
    kind: Pod
    metadata: {{name: p, namespace: default}}
    spec:
      containers: [{{name: c, image: x}}]
      resourceClaims: [{{name: npu, resourceClaimTemplateName: share}}]
    """)


def node(spec: str = "") -> str:
    return (
        "kind: SimulatedNode\nmetadata: {name: n}\n"
        f"spec: {{hardware: {{chip: 910B4, count: 2}}{spec}}}\n---\n"
    )


V134 = ("--kubernetes-version", "1.34")  # fixed shares unless a test names another version


def simulate(tmp_path: Path, text: str, *args: str) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(
            ["simulate", "--scenario", str(path), "--no-prepare", "-o", "json", *V134, *args]
        )
    return code, json.loads(out.getvalue() or "{}"), err.getvalue()


def published(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for s in document["resourceSlices"] for d in s["spec"]["devices"]}


def test_a_nodes_shared_chip_is_published_as_fixed_shares_on_1_34(tmp_path: Path) -> None:
    text = node(", sharedChips: npu-1, chipShares: 3") + CLASS + "---\n" + POD
    code, document, _ = simulate(tmp_path, text)
    assert code == 0
    devices = published(document)
    assert sorted(devices) == ["npu-0", "npu-1-share-0", "npu-1-share-1", "npu-1-share-2"]
    assert devices["npu-1-share-2"]["attributes"]["shareIndex"] == {"int": 2}
    [pod] = document["pods"]
    assert pod["status"] == "Bound"
    assert [d["device"] for ds in pod["claims"].values() for d in ds] == ["npu-1-share-0"]


@pytest.mark.parametrize(
    "args", [("--kubernetes-version", "1.36"), ("--feature-gates", "DRAConsumableCapacity=true")]
)
def test_where_the_version_serves_consumable_capacity_the_chip_is_one_device(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    code, document, _ = simulate(tmp_path, node(", sharedChips: npu-1") + CLASS, *args)
    assert code == 0
    devices = published(document)
    assert sorted(devices) == ["npu-0", "npu-1"]
    assert devices["npu-1"]["allowMultipleAllocations"] is True
    assert "requestPolicy" in devices["npu-1"]["capacity"]["memCapacity"]
    assert "allowMultipleAllocations" not in devices["npu-0"]


def test_simulates_flags_apply_to_nodes_that_say_nothing_and_a_nodes_own_fields_win(
    tmp_path: Path,
) -> None:
    other = node(", sharedChips: ''").replace("name: n}", "name: m}")
    text = node() + other + CLASS
    code, document, _ = simulate(tmp_path, text, "--shared-chips=all", "--chip-shares=2")
    assert code == 0
    by_node: dict[str, list[str]] = {}
    for s in document["resourceSlices"]:
        by_node.setdefault(s["spec"]["nodeName"], []).extend(
            d["name"] for d in s["spec"]["devices"]
        )
    assert sorted(by_node["n"]) == [f"npu-{c}-share-{i}" for c in (0, 1) for i in (0, 1)]
    assert sorted(by_node["m"]) == ["npu-0", "npu-1"]


@pytest.mark.parametrize(
    ("spec", "field"),
    [(", sharedChips: NPU_1", "sharedChips"), (", chipShares: 1", "chipShares")],
)
def test_a_bad_field_is_an_error_naming_it(tmp_path: Path, spec: str, field: str) -> None:
    code, _, err = simulate(tmp_path, node(spec) + CLASS)
    assert code != 0
    assert field in err
