"""A scenario's claim or template whose request tolerations the API server would refuse is
refused alone, naming the field; valid tolerations pass, in a scenario as in a snapshot."""

import textwrap
from pathlib import Path

import pytest

from npu_dra.adapters.kube_shapes.claims import claim_from_api
from npu_dra.adapters.simulation_files.scenario import ScenarioError
from npu_dra.adapters.simulation_files.scenario_load import parse_scenario
from npu_dra.adapters.simulation_files.snapshot_load import load_snapshot
from npu_dra.domain.device_tolerations import DeviceToleration, TolerationOperator

NODE = """\
kind: SimulatedNode
metadata: {name: node-a}
spec:
  hardware: {chip: 910B4, count: 8}
"""
TOLERATES = "[{key: npu.huawei.com/health, operator: Exists, effect: NoSchedule}]"
BOGUS = "[{key: npu.huawei.com/health, operator: Maybe}]"
BOGUS_REASON = "'Maybe' is not Equal or Exists"


def claim(name: str, tolerations: str) -> str:
    return textwrap.dedent(f"""\
        kind: ResourceClaim
        metadata: {{name: {name}, namespace: demo}}
        spec:
          devices:
            requests:
            - name: npu
              exactly: {{deviceClassName: npu.huawei.com, tolerations: {tolerations}}}
        """)


def template(name: str, tolerations: str) -> str:
    return textwrap.dedent(f"""\
        kind: ResourceClaimTemplate
        metadata: {{name: {name}, namespace: demo}}
        spec:
          spec:
            devices:
              requests:
              - name: npu
                firstAvailable:
                - {{name: any, deviceClassName: npu.huawei.com, tolerations: {tolerations}}}
        """)


def test_invalid_tolerations_refuse_only_their_objects() -> None:
    documents = (claim("good", TOLERATES), claim("bad", BOGUS), template("tpl", BOGUS))
    scenario = parse_scenario("---\n".join((NODE, *documents)), source="scenario.yaml")
    assert [c["metadata"]["name"] for c in scenario.claims] == ["good"]
    assert scenario.templates == ()
    assert [(r.name, r.field, r.reason) for r in scenario.refused] == [
        ("bad", "spec.devices.requests[0].exactly.tolerations[0].operator", BOGUS_REASON),
        (
            "tpl",
            "spec.spec.devices.requests[0].firstAvailable[0].tolerations[0].operator",
            BOGUS_REASON,
        ),
    ]
    good = claim_from_api(scenario.claims[0])
    assert good.spec.requests[0].tolerations[0].operator is TolerationOperator.EXISTS


def snapshot(tmp_path: Path, tolerations: str) -> Path:
    path = tmp_path / "cluster.yaml"
    node = "kind: Node\nmetadata: {name: node-a}\n"
    path.write_text("---\n".join((node, claim("held", tolerations))))
    return path


def test_a_snapshots_claim_keeps_its_tolerations(tmp_path: Path) -> None:
    (found,) = load_snapshot(snapshot(tmp_path, TOLERATES)).claims
    assert claim_from_api(found).spec.requests[0].tolerations == (
        DeviceToleration("npu.huawei.com/health", TolerationOperator.EXISTS, effect="NoSchedule"),
    )


def test_a_snapshots_invalid_toleration_fails_the_snapshot_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"demo/held: field .*tolerations\[0\]\.operator"):
        load_snapshot(snapshot(tmp_path, BOGUS))
