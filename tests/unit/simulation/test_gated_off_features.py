"""A feature the simulated version turns off is not dropped silently: a node asking for vNPUs
where DRAPartitionableDevices is off (v1.34.3's default) publishes whole chips, and the run
says so, naming the gate, the version and the flag that turns it on."""

from __future__ import annotations

from pathlib import Path

from tests.unit.simulation.test_explain import VNPU_NODE, claim, pod
from tests.unit.simulation.test_simulate_default import simulate

SCENARIO = VNPU_NODE + claim("one", 1) + pod("p", "one")


def test_vnpus_on_a_version_without_partitionable_devices_are_warned_of(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    code, _, err = simulate("--scenario", str(path), "--no-prepare", "--kubernetes-version", "1.34")
    assert code == 0, err
    assert (
        "npu-dra simulate: warning: node v1 asks for vNPUs (vnpu: 910B4), but "
        "DRAPartitionableDevices is off in kube-scheduler v1.34.3: its chips are published "
        "whole (--feature-gates DRAPartitionableDevices=true to decide with them)"
    ) in err


def test_no_warning_where_the_gate_is_on(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    for flags in (
        ("--feature-gates", "DRAPartitionableDevices=true"),
        ("--kubernetes-version", "1.36"),
    ):
        code, _, err = simulate("--scenario", str(path), "--no-prepare", *flags)
        assert code == 0, err
        assert "warning" not in err


def test_the_warning_is_in_the_json_and_yaml_documents_too(tmp_path: Path) -> None:
    """A CI job reading the document sees what stderr said (issue 46: warnings in every form)."""
    import json

    import yaml

    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    for output, load in (("json", json.loads), ("yaml", yaml.safe_load)):
        v134 = ("--kubernetes-version", "1.34")
        code, out, err = simulate("--scenario", str(path), "--no-prepare", "-o", output, *v134)
        assert code == 0, err
        [warning] = load(out)["warnings"]
        assert warning.startswith("node v1 asks for vNPUs (vnpu: 910B4), but ")
    flags = ("--kubernetes-version", "1.36")
    code, out, err = simulate("--scenario", str(path), "--no-prepare", "-o", "json", *flags)
    assert json.loads(out)["warnings"] == []
