"""A scenario file that is not a list of Kubernetes objects stops `npu-dra simulate` (exit 2);
an object the API server would refuse is named with its field and left out while the rest runs
(exit 4). Never a traceback."""

import contextlib
import io
import json
import textwrap
from pathlib import Path

import pytest

from npu_dra.app.cli import main

NODE = """\
kind: SimulatedNode
metadata: {name: node-a}
spec:
  hardware: {chip: 910B4, count: 8}
"""
CLASS = """\
kind: DeviceClass
metadata: {name: npu.huawei.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "npu.huawei.com"'}
"""


def claim(exactly: str, name: str = "bad-claim") -> str:
    return textwrap.dedent(f"""\
        kind: ResourceClaim
        metadata: {{name: {name}, namespace: ascend-dra}}
        spec:
          devices:
            requests:
            - name: npu
              exactly: {{deviceClassName: npu.huawei.com, {exactly}}}
        """)


def simulate(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", *args])
    return code, out.getvalue(), err.getvalue()


def run_file(tmp_path: Path, *documents: str) -> tuple[int, str, str, Path]:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(documents))
    code, out, err = simulate("--scenario", str(path), "--output", "json")
    return code, out, err, path


def refused(tmp_path: Path, *documents: str) -> str:
    """The whole file refused: nothing ran."""
    code, out, err, path = run_file(tmp_path, *documents)
    assert code == 2
    assert out == ""
    assert str(path) in err
    assert "Traceback" not in err
    return err


def left_out(tmp_path: Path, *documents: str) -> str:
    """One object refused and left out, named on stderr and in the document; the rest ran."""
    code, out, err, path = run_file(tmp_path, *documents)
    assert code == 4, err
    assert json.loads(out)["refused"]
    assert str(path) in err
    assert "Traceback" not in err
    return err


def test_a_file_that_is_not_yaml(tmp_path: Path) -> None:
    err = refused(tmp_path, "kind: SimulatedNode\nmetadata: {name: [node-a\n")
    assert "not valid YAML" in err
    assert "line 2" in err


def test_a_document_that_is_not_an_object(tmp_path: Path) -> None:
    assert "document 2: expected a Kubernetes object" in refused(tmp_path, NODE, "just words\n")


def test_an_unknown_kind_is_left_out(tmp_path: Path) -> None:
    err = left_out(tmp_path, NODE, "kind: ResourceClam\nmetadata: {name: typo}\n")
    assert "ResourceClam typo: field kind: 'ResourceClam' is not one of" in err


def test_a_missing_kind(tmp_path: Path) -> None:
    assert "document 2: field kind: None" in refused(tmp_path, NODE, "metadata: {name: x}\n")


def test_a_node_without_a_chip(tmp_path: Path) -> None:
    node = "kind: SimulatedNode\nmetadata: {name: node-a}\nspec:\n  hardware: {count: 8}\n"
    assert "SimulatedNode node-a: field spec.hardware.chip: is required" in left_out(tmp_path, node)


def test_no_nodes_at_all(tmp_path: Path) -> None:
    assert "no SimulatedNode objects" in refused(tmp_path, CLASS)


@pytest.mark.parametrize(
    ("hardware", "field", "reason"),
    [
        ("{chip: 910B4, count: 8, topology: ring}", "topology", "expected mesh, rings or none"),
        ("{chip: 910B4, count: eight}", "count", "eight"),
        ("{chip: 999Z, count: 2}", "chip", "'999Z' is not known"),
        ("{chip: 910B4, count: 2, numaNodes: [0]}", "numaNodes", "1 entries for 2 chips"),
        ("{chip: 910B4, count: 2, health: {1: Broken}}", "health", "'Broken'"),
    ],
)
def test_node_hardware_that_cannot_be_built_names_the_node(
    tmp_path: Path, hardware: str, field: str, reason: str
) -> None:
    node = f"kind: SimulatedNode\nmetadata: {{name: node-x}}\nspec:\n  hardware: {hardware}\n"
    err = left_out(tmp_path, node)
    assert "SimulatedNode node-x" in err
    assert field in err
    assert reason in err


def test_an_unknown_allocation_mode(tmp_path: Path) -> None:
    err = left_out(tmp_path, NODE, CLASS, claim("allocationMode: Bogus"))
    assert "ResourceClaim ascend-dra/bad-claim" in err
    assert "field spec.devices.requests[0].exactly.allocationMode" in err
    assert "'Bogus' is not ExactCount or All" in err


def test_a_count_of_zero_is_defaulted_to_one_as_the_api_server_does(tmp_path: Path) -> None:
    code, out, err, _ = run_file(tmp_path, NODE, CLASS, claim("count: 0"))
    assert code == 0, err
    assert json.loads(out)["resourceSlices"]


def test_a_negative_count(tmp_path: Path) -> None:
    err = left_out(tmp_path, NODE, CLASS, claim("count: -1"))
    assert "ResourceClaim ascend-dra/bad-claim" in err
    assert "field spec.devices.requests[0].exactly.count: must be greater than zero" in err


def test_a_count_with_all(tmp_path: Path) -> None:
    err = left_out(tmp_path, NODE, CLASS, claim("allocationMode: All, count: 2"))
    assert "exactly.count: must not be specified when allocationMode is 'All'" in err


def test_a_template_with_a_bad_request(tmp_path: Path) -> None:
    template = textwrap.dedent("""\
        kind: ResourceClaimTemplate
        metadata: {name: tpl, namespace: ascend-dra}
        spec:
          spec:
            devices:
              requests:
              - name: npu
                exactly: {deviceClassName: npu.huawei.com, count: -1}
        """)
    err = left_out(tmp_path, NODE, CLASS, template)
    assert "ResourceClaimTemplate ascend-dra/tpl" in err
    assert "spec.spec.devices.requests[0].exactly.count" in err


def test_a_pod_naming_both_a_claim_and_a_template(tmp_path: Path) -> None:
    pod = textwrap.dedent("""\
        kind: Pod
        metadata: {name: p, namespace: ascend-dra}
        spec:
          resourceClaims:
          - {name: npu, resourceClaimName: a, resourceClaimTemplateName: b}
          containers: [{name: app, image: busybox}]
        """)
    err = left_out(tmp_path, NODE, CLASS, pod)
    assert "Pod ascend-dra/p: field spec.resourceClaims[0].resourceClaimName" in err


@pytest.mark.parametrize(
    ("document", "what"),
    [
        (CLASS, "DeviceClass npu.huawei.com"),
        (claim("count: 1", name="twice"), "ResourceClaim ascend-dra/twice"),
        (NODE, "SimulatedNode node-a"),
    ],
)
def test_an_object_defined_twice_is_refused_the_second_time(
    tmp_path: Path, document: str, what: str
) -> None:
    err = left_out(tmp_path, NODE, CLASS, document, document)
    assert what in err
    assert "field metadata.name: already exists" in err


def test_a_pod_referencing_a_missing_claim_is_pending_with_the_claims_name(
    tmp_path: Path,
) -> None:
    pod = textwrap.dedent("""\
        kind: Pod
        metadata: {name: lonely, namespace: ascend-dra}
        spec:
          resourceClaims:
          - {name: npu, resourceClaimName: nowhere}
          containers: [{name: app, image: busybox}]
        """)
    code, out, err, _ = run_file(tmp_path, NODE, CLASS, pod)
    assert code == 0, err
    (row,) = json.loads(out)["allocations"]
    assert row["pod"] == "ascend-dra/lonely"
    assert row["status"].startswith("Pending: ")
    assert "ascend-dra/nowhere" in row["status"]
    assert json.loads(out)["cdiSpecs"] == {}


def test_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"
    code, out, err = simulate("--scenario", str(path))
    assert code != 0
    assert out == ""
    assert str(path) in err
    assert "No such file" in err


def test_an_unknown_field_is_refused_not_ignored(tmp_path: Path) -> None:
    err = left_out(tmp_path, NODE, CLASS, claim("cuont: 2"))
    assert "field spec.devices.requests[0].exactly.cuont: unknown field" in err


def test_an_unknown_pod_spec_field_is_refused(tmp_path: Path) -> None:
    pod = "kind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelectr: {zone: a}\n"
    assert "Pod p: field spec.nodeSelectr: unknown field" in left_out(tmp_path, NODE, pod)


def test_a_match_attribute_without_a_domain_is_refused(tmp_path: Path) -> None:
    constrained = claim("count: 2") + "    constraints:\n    - {matchAttribute: numaNode}\n"
    err = left_out(tmp_path, NODE, CLASS, constrained)
    assert "constraints[0].matchAttribute: a fully qualified name" in err


def test_a_constraint_naming_no_request_is_refused(tmp_path: Path) -> None:
    constrained = (
        claim("count: 2")
        + "    constraints:\n    - {matchAttribute: npu.huawei.com/numaNode, requests: [gpu]}\n"
    )
    assert "'gpu' is not the name of a request" in left_out(tmp_path, NODE, CLASS, constrained)


def test_more_than_32_requests_are_refused(tmp_path: Path) -> None:
    requests = "".join(
        f"    - {{name: r{i}, exactly: {{deviceClassName: npu.huawei.com}}}}\n" for i in range(33)
    )
    many = (
        "kind: ResourceClaim\nmetadata: {name: many, namespace: ns}\n"
        f"spec:\n  devices:\n    requests:\n{requests}"
    )
    assert "requests: must have at most 32 items" in left_out(tmp_path, NODE, CLASS, many)


def test_admin_access_outside_a_labelled_namespace_is_forbidden(tmp_path: Path) -> None:
    err = left_out(tmp_path, NODE, CLASS, claim("adminAccess: true"))
    assert "exactly.adminAccess: Forbidden: admin access to devices requires" in err


def test_admin_access_in_a_labelled_namespace_is_accepted(tmp_path: Path) -> None:
    namespace = (
        "kind: Namespace\nmetadata:\n  name: ascend-dra\n"
        '  labels: {resource.kubernetes.io/admin-access: "true"}\n'
    )
    code, _, err, _ = run_file(tmp_path, namespace, NODE, CLASS, claim("adminAccess: true"))
    assert code == 0, err


def test_a_selector_that_does_not_compile_is_refused_up_front(tmp_path: Path) -> None:
    broken = claim("selectors: [{cel: {expression: 'device.driver =='}}]")
    err = left_out(tmp_path, NODE, CLASS, broken)
    assert "exactly.selectors[0].cel.expression: Invalid value: compilation failed" in err


def test_a_pod_without_containers_is_refused(tmp_path: Path) -> None:
    pod = "kind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims: []\n"
    assert "Pod p: field spec.containers: Required value" in left_out(tmp_path, NODE, pod)
