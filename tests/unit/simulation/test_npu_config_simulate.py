"""simulate holds the simulated driver's config entries to NpuConfig as the cluster's admission
policy does (an object with a bad one is refused at create, naming the field), copies class and
claim configs into each allocation as kube-scheduler does, and its node plugins apply them at
prepare."""

import contextlib
import io
import json
import textwrap
from pathlib import Path

from npu_dra.app.cli import main
from tests.unit.simulation.test_refused_objects import NODE, REFUSED, pod, pods_of, run

GOOD = "{apiVersion: npu.huawei.com/v1alpha1, kind: NpuConfig, sharing: {strategy: Exclusive}}"
SOMETIMES = "{apiVersion: npu.huawei.com/v1alpha1, kind: NpuConfig, sharing: {strategy: Sometimes}}"
TYPO = "{apiVersion: npu.huawei.com/v1alpha1, kind: NpuConfig, sharing: {stratgy: Shared}}"
SHARED = "{apiVersion: npu.huawei.com/v1alpha1, kind: NpuConfig, sharing: {strategy: Shared}}"


def device_class(parameters: str | None = None, driver: str = "npu.huawei.com") -> str:
    config = (
        f"  config:\n  - opaque: {{driver: {driver}, parameters: {parameters}}}\n"
        if parameters
        else ""
    )
    return (
        textwrap.dedent("""\
        kind: DeviceClass
        metadata: {name: npu.huawei.com}
        spec:
          selectors:
          - cel: {expression: 'device.driver == "npu.huawei.com"'}
        """)
        + config
    )


def configs(*entries: tuple[str, str], indent: str) -> str:
    lines = [f"{indent}config:"]
    for driver, parameters in entries:
        lines.append(f"{indent}- requests: [npu]")
        lines.append(f"{indent}  opaque: {{driver: {driver}, parameters: {parameters}}}")
    return "\n".join(lines) + "\n"


def claim(name: str, *entries: tuple[str, str]) -> str:
    return textwrap.dedent(f"""\
        kind: ResourceClaim
        metadata: {{name: {name}, namespace: demo}}
        spec:
          devices:
            requests:
            - {{name: npu, exactly: {{deviceClassName: npu.huawei.com}}}}
        """) + configs(*entries, indent="    ")


def template(name: str, *entries: tuple[str, str]) -> str:
    return textwrap.dedent(f"""\
        kind: ResourceClaimTemplate
        metadata: {{name: {name}, namespace: demo}}
        spec:
          spec:
            devices:
              requests:
              - {{name: npu, exactly: {{deviceClassName: npu.huawei.com}}}}
        """) + configs(*entries, indent="      ")


def test_a_claim_with_an_invalid_npuconfig_is_refused_naming_the_field(tmp_path: Path) -> None:
    code, out, err = run(
        tmp_path,
        NODE,
        device_class(),
        claim("good", ("npu.huawei.com", GOOD)),
        claim("bad", ("other.example.com", "{x: 1}"), ("npu.huawei.com", SOMETIMES)),
        pod("uses-good", "resourceClaimName: good"),
        pod("uses-bad", "resourceClaimName: bad"),
    )
    assert code == REFUSED, err
    assert json.loads(out)["refused"] == [
        {
            "kind": "ResourceClaim",
            "namespace": "demo",
            "name": "bad",
            "field": "spec.devices.config[1].opaque.parameters.sharing.strategy",
            "reason": '"Sometimes" is not Exclusive or Shared',
        }
    ]
    pods = pods_of(out)
    assert pods["demo/uses-good"]["node"] == "node-a"
    assert "resourceclaim demo/bad not found" in pods["demo/uses-bad"]["reason"]


def test_a_template_and_a_class_with_an_invalid_npuconfig_are_refused(tmp_path: Path) -> None:
    code, out, err = run(
        tmp_path, NODE, device_class(TYPO), template("tpl", ("npu.huawei.com", SOMETIMES))
    )
    assert code == REFUSED, err
    assert [(r["kind"], r["field"], r["reason"]) for r in json.loads(out)["refused"]] == [
        (
            "DeviceClass",
            "spec.config[0].opaque.parameters.sharing.stratgy",
            "unknown field (sharing has strategy only)",
        ),
        (
            "ResourceClaimTemplate",
            "spec.spec.devices.config[0].opaque.parameters.sharing.strategy",
            '"Sometimes" is not Exclusive or Shared',
        ),
    ]


def test_another_drivers_config_is_not_checked(tmp_path: Path) -> None:
    code, out, err = run(
        tmp_path,
        NODE,
        device_class("{anything: [goes]}", driver="other.example.com"),
        claim("c", ("other.example.com", "{kind: Whatever}")),
        pod("p", "resourceClaimName: c"),
    )
    assert code == 0, err
    assert pods_of(out)["demo/p"]["node"] == "node-a"


def prepared(tmp_path: Path, *documents: str) -> dict[str, str]:
    """Each claim's prepare status, with the node plugins preparing (no --no-prepare)."""
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(documents))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["simulate", "--scenario", str(path), "-o", "json"])
    return {row["claim"]: row["status"] for row in json.loads(out.getvalue())["allocations"]}


def test_the_classs_config_reaches_the_allocation_and_is_applied_at_prepare(
    tmp_path: Path,
) -> None:
    status = prepared(
        tmp_path,
        NODE,
        device_class(SHARED),
        claim("from-class"),
        claim("overridden", ("npu.huawei.com", GOOD)),
        pod("a", "resourceClaimName: from-class"),
        pod("b", "resourceClaimName: overridden"),
    )
    assert status["overridden"] == "Prepared"  # the claim's entry wins over the class's
    assert status["from-class"].startswith("Error: claim demo/from-class (")
    assert (
        "request 'npu', device 'npu-0': config[0] (FromClass) field sharing.strategy: Shared "
        "needs a share of a shared chip"
    ) in status["from-class"]
