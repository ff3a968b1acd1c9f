"""Invalid objects: the v1.34.3 API server (strict field validation, as `kubectl create` asks by
default) and `npu-dra simulate` both refuse each one, simulate naming the object and field (and,
where a case gives it, the API server's reason) and leaving it out of a run that goes on (exit
status 4)."""

from __future__ import annotations

import contextlib
import io
import json
import textwrap
import uuid
from pathlib import Path

import pytest
import yaml

from npu_dra.app.cli import main
from tests.support.controlplane import ControlPlane

NODE = "kind: SimulatedNode\nmetadata: {name: n}\nspec:\n  hardware: {chip: 910B4, count: 2}\n"


def _claim(devices: str) -> str:
    return (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
        "metadata: {name: bad, namespace: NS}\nspec:\n  devices:\n"
        + textwrap.indent(textwrap.dedent(devices), "    ")
    )


CASES = {
    "unknown-field": (
        _claim("requests:\n- {name: npu, exactly: {deviceClassName: c, cuont: 2}}\n"),
        "exactly.cuont: unknown field",
    ),
    "match-attribute-without-domain": (
        _claim(
            "requests:\n- {name: npu, exactly: {deviceClassName: c, count: 2}}\n"
            "constraints:\n- {matchAttribute: numaNode}\n"
        ),
        "constraints[0].matchAttribute",
    ),
    "count-negative": (
        _claim("requests:\n- {name: npu, exactly: {deviceClassName: c, count: -1}}\n"),
        "exactly.count: must be greater than zero",
    ),
    "count-with-all": (
        _claim(
            "requests:\n- {name: npu, exactly: {deviceClassName: c, allocationMode: All, "
            "count: 2}}\n"
        ),
        "exactly.count: must not be specified",
    ),
    "admin-access-unlabelled-namespace": (
        _claim("requests:\n- {name: npu, exactly: {deviceClassName: c, adminAccess: true}}\n"),
        "exactly.adminAccess: Forbidden",
    ),
    "cel-syntax-error": (
        _claim(
            "requests:\n- name: npu\n  exactly:\n    deviceClassName: c\n    selectors:\n"
            "    - cel: {expression: 'device.driver =='}\n"
        ),
        "selectors[0].cel.expression",
    ),
    "cel-type-error-on-device": (
        _claim(
            "requests:\n- name: npu\n  exactly:\n    deviceClassName: c\n    selectors:\n"
            "    - cel: {expression: 'device.driver == 1'}\n"
        ),
        "selectors[0].cel.expression",
        "found no matching overload for '_==_' applied to '(string, int)'",
    ),
    "cel-format-clause": (
        _claim(
            "requests:\n- name: npu\n  exactly:\n    deviceClassName: c\n    selectors:\n"
            '    - cel: {expression: \'"%d".format(["a"]) == ""\'}\n'
        ),
        "selectors[0].cel.expression",
        "decimal clause can only be used on integers, was given string",
    ),
    "first-available-and-exactly": (
        _claim(
            "requests:\n- name: npu\n  exactly: {deviceClassName: c}\n"
            "  firstAvailable: [{name: a, deviceClassName: c}]\n"
        ),
        "requests[0]",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_simulate_refuses_what_the_api_server_refuses(
    case: str, control_plane: ControlPlane, tmp_path: Path
) -> None:
    namespace = control_plane.create_namespace(f"bad-{uuid.uuid4().hex[:6]}")
    text, field, *reasons = CASES[case]
    text = text.replace("NS", namespace)
    created = control_plane.kubectl(
        "create", "-f", "-", input=json.dumps(yaml.safe_load(text)), check=False
    )
    assert created.returncode != 0, f"the API server accepted {case}: {created.stdout}"
    path = tmp_path / "scenario.yaml"
    path.write_text(f"{NODE}---\n{text}")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--scenario", str(path), "--kubernetes-version", "1.34"])
    assert code == 4, out.getvalue()[:2000]
    assert f"ResourceClaim {namespace}/bad" in err.getvalue()
    assert field in err.getvalue()
    for reason in reasons:  # the API server's words, which simulate repeats
        assert reason in created.stderr
        assert reason in err.getvalue()
