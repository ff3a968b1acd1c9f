"""Which admission policies `simulate` assumes: npu-dra's NpuConfig policy
(deploy/manifests/37-npuconfig-policy.yaml) checks a scenario's claims, templates and classes.
With --from, a snapshot that holds the cluster's ValidatingAdmissionPolicies and their bindings
decides instead: the what-ifs are checked against that policy only where the cluster has it bound;
a snapshot without any says what it assumed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.unit.simulation.test_npu_config_simulate import SOMETIMES, claim
from tests.unit.simulation.test_simulate_default import simulate

SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "two-drivers.yaml"
POLICY_FILE = Path(__file__).resolve().parents[3] / "deploy/manifests/37-npuconfig-policy.yaml"


def _snapshot(tmp_path: Path, *extra: dict[str, Any]) -> Path:
    document = yaml.safe_load(SNAPSHOT.read_text())
    document["items"] += list(extra)
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _run(tmp_path: Path, snapshot: Path) -> tuple[int, dict[str, Any], str]:
    overlay = tmp_path / "what-if.yaml"
    overlay.write_text(claim("bad", ("npu.huawei.com", SOMETIMES)))
    code, out, err = simulate(
        "--from", str(snapshot), "--scenario", str(overlay), "-o", "json", "--no-prepare"
    )
    return code, json.loads(out), err


def _shipped() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(POLICY_FILE.read_text()) if d]


OTHER = [
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "something-else"},
        "spec": {"validations": [{"expression": "true"}]},
    },
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "something-else"},
        "spec": {"policyName": "something-else", "validationActions": ["Deny"]},
    },
]


def test_without_policies_in_the_snapshot_the_shipped_one_is_assumed_and_said(
    tmp_path: Path,
) -> None:
    code, document, _ = _run(tmp_path, _snapshot(tmp_path))
    assert code == 4
    assert [r["name"] for r in document["refused"]] == ["bad"]
    assert any("assumes npu-dra's NpuConfig policy" in w for w in document["warnings"])


def test_a_cluster_with_the_policy_bound_refuses_the_what_if(tmp_path: Path) -> None:
    code, document, _ = _run(tmp_path, _snapshot(tmp_path, *_shipped(), *OTHER))
    assert code == 4
    assert [r["name"] for r in document["refused"]] == ["bad"]
    assert any("something-else" in w and "not evaluated" in w for w in document["warnings"])


def test_a_cluster_without_the_policy_admits_the_what_if(tmp_path: Path) -> None:
    code, document, err = _run(tmp_path, _snapshot(tmp_path, *OTHER))
    assert code == 0, err
    assert document["refused"] == []
