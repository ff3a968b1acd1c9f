"""A capacity summary in every output form: devices in total, allocated, free and unusable (not
published, or tainted) per chip model and per node group (nodes of one shape: chip model and
devices per node), as the table's `# Capacity` section and the documents' `capacity`."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.unit.simulation.test_simulate_default import simulate

# The built-in scenario: two nodes of 8 x 910B4; its two pods take 1 and 2 NPUs.
DEFAULT = {
    "byChip": [
        {"chip": "910B4", "nodes": 2, "devices": 16, "allocated": 3, "free": 13, "unusable": 0}
    ],
    "byNodeGroup": [
        {"group": "8 x 910B4", "nodes": 2, "devices": 16, "allocated": 3, "free": 13, "unusable": 0}
    ],
}


def test_json_and_yaml_carry_the_capacity() -> None:
    code, out, err = simulate("-o", "json", "--no-prepare")
    assert code == 0, err
    assert json.loads(out)["capacity"] == DEFAULT
    code, out, err = simulate("-o", "yaml", "--no-prepare")
    assert code == 0, err
    assert yaml.safe_load(out)["capacity"] == DEFAULT


def test_the_table_has_a_capacity_section() -> None:
    code, out, err = simulate("--no-prepare")
    assert code == 0, err
    section = out.split("# Capacity")[1].split("\n# ")[0]
    rows = [line.split() for line in section.splitlines()[1:]]
    assert ["CHIP", "NODES", "DEVICES", "ALLOCATED", "FREE", "UNUSABLE"] in rows
    assert ["910B4", "2", "16", "3", "13", "0"] in rows
    assert ["NODE-GROUP", "NODES", "DEVICES", "ALLOCATED", "FREE", "UNUSABLE"] in rows
    assert ["8", "x", "910B4", "2", "16", "3", "13", "0"] in rows


def test_unpublished_and_tainted_chips_count_as_unusable(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(
        "kind: SimulatedNode\nmetadata: {name: n1}\n"
        "spec: {hardware: {chip: 910A, count: 4, health: {1: Alarm, 2: Alarm}}}\n"
    )
    for version in ("1.34", "1.36"):  # left out of the slice, or published tainted
        code, out, err = simulate(
            "--scenario", str(path), "-o", "json", "--kubernetes-version", version
        )
        assert code == 0, err
        [by_chip] = json.loads(out)["capacity"]["byChip"]
        assert by_chip == {
            "chip": "910A",
            "nodes": 1,
            "devices": 4,
            "allocated": 0,
            "free": 2,
            "unusable": 2,
        }
