"""One object the API server would refuse is reported and left out; the rest of the scenario runs
as in a cluster, and the exit status (4) says something was refused. A file that is not a list of
objects still fails whole (2)."""

import contextlib
import io
import json
import textwrap
from pathlib import Path
from typing import Any

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
REFUSED = 4


def claim(name: str, exactly: str = "count: 1", constraints: str = "") -> str:
    text = textwrap.dedent(f"""\
        kind: ResourceClaim
        metadata: {{name: {name}, namespace: demo}}
        spec:
          devices:
            requests:
            - name: npu
              exactly: {{deviceClassName: npu.huawei.com, {exactly}}}
        """)
    return text + (f"    constraints:\n    - {constraints}\n" if constraints else "")


def template(name: str, exactly: str = "count: 1") -> str:
    return textwrap.dedent(f"""\
        kind: ResourceClaimTemplate
        metadata: {{name: {name}, namespace: demo}}
        spec:
          spec:
            devices:
              requests:
              - name: npu
                exactly: {{deviceClassName: npu.huawei.com, {exactly}}}
        """)


def pod(name: str, claim_ref: str, container: str = "name: app, image: busybox") -> str:
    return textwrap.dedent(f"""\
        kind: Pod
        metadata: {{name: {name}, namespace: demo}}
        spec:
          resourceClaims: [{{name: npu, {claim_ref}}}]
          containers: [{{{container}}}]
        """)


def run(tmp_path: Path, *documents: str, flags: tuple[str, ...] = ("-o", "json")) -> Any:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(documents))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--scenario", str(path), "--no-prepare", *flags])
    return code, out.getvalue(), err.getvalue()


def pods_of(out: str) -> dict[str, dict[str, Any]]:
    return {p["pod"]: p for p in json.loads(out)["pods"]}


def test_a_refused_claim_is_left_out_and_the_rest_runs(tmp_path: Path) -> None:
    code, out, err = run(
        tmp_path,
        NODE,
        CLASS,
        claim("good"),
        claim("bad", "count: -1"),
        pod("uses-good", "resourceClaimName: good"),
        pod("uses-bad", "resourceClaimName: bad"),
    )
    assert code == REFUSED, err
    document = json.loads(out)
    assert document["refused"] == [
        {
            "kind": "ResourceClaim",
            "namespace": "demo",
            "name": "bad",
            "field": "spec.devices.requests[0].exactly.count",
            "reason": "must be greater than zero, got -1",
        }
    ]
    assert document["summary"]["refused"] == 1
    pods = pods_of(out)
    assert pods["demo/uses-good"]["node"] == "node-a"
    assert pods["demo/uses-bad"]["node"] is None
    assert "resourceclaim demo/bad not found" in pods["demo/uses-bad"]["reason"]
    assert "ResourceClaim demo/bad: field spec.devices.requests[0].exactly.count" in err
    assert str(tmp_path / "scenario.yaml") in err


def test_a_pod_whose_template_was_refused_stays_pending_for_the_missing_template(
    tmp_path: Path,
) -> None:
    code, out, err = run(
        tmp_path,
        NODE,
        CLASS,
        template("tpl", "allocationMode: Bogus"),
        pod("p", "resourceClaimTemplateName: tpl"),
    )
    assert code == REFUSED, err
    (refusal,) = json.loads(out)["refused"]
    assert (refusal["kind"], refusal["name"]) == ("ResourceClaimTemplate", "tpl")
    decided = pods_of(out)["demo/p"]
    assert decided["status"] == "Pending"
    assert decided["reason"].startswith('pod "demo/p": ResourceClaim not created yet')
    assert "template demo/tpl not found" in decided["reason"]


def test_a_refused_pod_is_left_out_and_the_others_are_decided(tmp_path: Path) -> None:
    code, out, err = run(
        tmp_path,
        NODE,
        CLASS,
        claim("good"),
        pod("no-image", "resourceClaimName: good", container="name: app"),
        pod("fine", "resourceClaimName: good"),
    )
    assert code == REFUSED, err
    assert list(pods_of(out)) == ["demo/fine"]
    assert json.loads(out)["refused"][0]["field"] == "spec.containers[0].image"


def test_a_refused_node_is_left_out_and_the_other_nodes_serve(tmp_path: Path) -> None:
    bad = NODE.replace("node-a", "node-b").replace("910B4", "999Z")
    code, out, err = run(tmp_path, bad, NODE, CLASS, claim("c"), pod("p", "resourceClaimName: c"))
    assert code == REFUSED, err
    assert pods_of(out)["demo/p"]["node"] == "node-a"
    assert {s["spec"]["nodeName"] for s in json.loads(out)["resourceSlices"]} == {"node-a"}
    assert "SimulatedNode node-b: field spec.hardware" in err


def test_the_second_object_of_one_name_is_refused_as_already_existing(tmp_path: Path) -> None:
    code, out, err = run(
        tmp_path,
        NODE,
        CLASS,
        claim("twice", "count: 2"),
        claim("twice", "count: 9"),
        pod("p", "resourceClaimName: twice"),
    )
    assert code == REFUSED, err
    (refusal,) = json.loads(out)["refused"]
    assert (refusal["field"], refusal["reason"]) == ("metadata.name", "already exists")
    assert len(pods_of(out)["demo/p"]["claims"]["twice"]) == 2  # the first one's count


def test_a_selector_that_does_not_compile_refuses_only_its_object(tmp_path: Path) -> None:
    broken = claim("broken", "selectors: [{cel: {expression: 'device.driver =='}}]")
    code, out, err = run(
        tmp_path, NODE, CLASS, broken, claim("c"), pod("p", "resourceClaimName: c")
    )
    assert code == REFUSED, err
    (refusal,) = json.loads(out)["refused"]
    assert refusal["name"] == "broken"
    assert refusal["reason"].startswith("Invalid value: compilation failed")
    assert pods_of(out)["demo/p"]["node"] == "node-a"


def test_the_table_lists_the_refused_objects_and_the_summary_counts_them(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path, NODE, CLASS, claim("bad", "cuont: 2"), flags=())
    assert code == REFUSED
    assert "# Refused objects" in out
    assert "demo/bad" in out
    assert "spec.devices.requests[0].exactly.cuont   unknown field" in out
    assert out.rstrip().splitlines()[-1].endswith("1 object refused (exit 4)")


def test_refusals_exit_4_even_with_fail_on_pending(tmp_path: Path) -> None:
    documents = (NODE, CLASS, claim("bad", "count: -1"), pod("p", "resourceClaimName: bad"))
    code, _, err = run(tmp_path, *documents, flags=("--fail-on-pending",))
    assert code == REFUSED
    assert "1 pod not bound: demo/p" in err


def test_a_clean_scenario_still_exits_0_with_no_refusals(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, NODE, CLASS, claim("c"), pod("p", "resourceClaimName: c"))
    assert code == 0, err
    assert json.loads(out)["refused"] == []
    assert json.loads(out)["summary"]["refused"] == 0


def test_a_file_that_is_not_a_list_of_objects_still_fails_whole(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, NODE, "just words\n")
    assert (code, out) == (2, "")
    assert "expected a Kubernetes object" in err


def test_a_kind_simulate_does_not_know_is_refused_alone(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, NODE, "kind: ConfigMap\nmetadata: {name: cm}\n")
    assert code == REFUSED, err
    (refusal,) = json.loads(out)["refused"]
    assert (refusal["kind"], refusal["field"]) == ("ConfigMap", "kind")


def test_help_documents_the_exit_statuses() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(["simulate", "--help"])
    assert "4  it ran, but objects the API server would refuse were left out" in out.getvalue()
