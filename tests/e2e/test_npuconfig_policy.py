"""The NpuConfig admission policy (deploy/manifests/37-npuconfig-policy.yaml) on real API servers,
v1.34.3 and v1.37.2: a ResourceClaim, ResourceClaimTemplate or DeviceClass whose config entry for
the driver is not a valid NpuConfig is refused when written, with the field's path in the message,
and so is a claim's allocation (status.allocation.devices.config, written through
resourceclaims/status); valid ones and other drivers' entries pass. The chart renders the same
policy.

The session's planes are shared, so the shipped policy runs here under a name of this module's own
and its binding matches only objects labelled for this module: other tests' objects are unaffected.
"""

from __future__ import annotations

import copy
import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.helm_cli import Helm, build_helm, without_helm_labels
from tests.support.controlplane import ControlPlane, wait_for
from tests.support.k8s_fixtures import plane_for, versions_params

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "manifests" / "37-npuconfig-policy.yaml"
DRIVER = "npu.huawei.com"
GOOD = {"apiVersion": "npu.huawei.com/v1alpha1", "kind": "NpuConfig"}
LABEL = "npu-dra.test/npuconfig-policy"
POLICY_LOAD_S = 60.0  # the API server loads a new policy asynchronously (about a second)
# Where each kind keeps its config entries.
CONFIG_LIST = {
    "ResourceClaim": "spec.devices.config",
    "ResourceClaimTemplate": "spec.spec.devices.config",
    "DeviceClass": "spec.config",
}
VALID = {
    "no-sharing": GOOD,
    "shared": {**GOOD, "sharing": {"strategy": "Shared"}},
    "exclusive": {**GOOD, "sharing": {"strategy": "Exclusive"}},
}
# Each bad form: its parameters, the field named and what is said of it.
BAD = {
    "wrong-api-version": (
        {**GOOD, "apiVersion": "npu.huawei.com/v1"},
        "apiVersion",
        '"npu.huawei.com/v1" is not npu.huawei.com/v1alpha1',
    ),
    "no-api-version": ({"kind": "NpuConfig"}, "apiVersion", "required"),
    "wrong-kind": ({**GOOD, "kind": "GpuConfig"}, "kind", '"GpuConfig" is not NpuConfig'),
    "unknown-top-level-field": ({**GOOD, "sharingMode": "Shared"}, "sharingMode", "unknown field"),
    "unknown-field-under-sharing": (
        {**GOOD, "sharing": {"stratgy": "Shared"}},
        "sharing.stratgy",
        "unknown field",
    ),
    "bad-strategy": (
        {**GOOD, "sharing": {"strategy": "Sometimes"}},
        "sharing.strategy",
        '"Sometimes" is not Exclusive or Shared',
    ),
    "sharing-without-strategy": ({**GOOD, "sharing": {}}, "sharing.strategy", "required"),
    "sharing-not-an-object": ({**GOOD, "sharing": "Shared"}, "sharing", "must be an object"),
}
GARBAGE = {"apiVersion": "v9", "kind": "Whatever", "sharing": [1, {"x": None}], "extra": True}


def entry(parameters: dict[str, Any], driver: str = DRIVER) -> dict[str, Any]:
    return {"opaque": {"driver": driver, "parameters": parameters}}


def shipped() -> list[dict[str, Any]]:
    return [o for o in yaml.safe_load_all(MANIFEST.read_text()) if o]


def in_module_scope(run: str) -> list[dict[str, Any]]:
    """The shipped policy and binding renamed for this run, the binding matching only objects
    labelled LABEL=run."""
    objects = copy.deepcopy(shipped())
    for obj in objects:
        obj["metadata"]["name"] += f"-{run}"
        if obj["kind"] == "ValidatingAdmissionPolicyBinding":
            obj["spec"]["policyName"] += f"-{run}"
            selector = {"objectSelector": {"matchLabels": {LABEL: run}}}
            obj["spec"]["matchResources"] = selector
    return objects


@dataclass
class Policed:
    plane: ControlPlane
    namespace: str
    run: str

    def body(self, kind: str, configs: list[dict[str, Any]], name: str = "") -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name or f"{kind.lower()}-{uuid.uuid4().hex[:8]}"}
        meta["labels"] = {LABEL: self.run}
        if kind == "DeviceClass":
            return {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": meta,
                    "spec": {"config": configs}}  # fmt: skip
        meta["namespace"] = self.namespace
        claim = {"devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": DRIVER}}],
                             "config": configs}}  # fmt: skip
        spec = {"spec": claim} if kind == "ResourceClaimTemplate" else claim
        return {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": meta, "spec": spec}

    def write(self, verb: str, body: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        return self.plane.kubectl(verb, "-f", "-", input=json.dumps(body), check=False)

    def create(self, kind: str, configs: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
        return self.write("create", self.body(kind, configs))


def refused(result: subprocess.CompletedProcess[str], says: str) -> bool:
    return (
        result.returncode != 0
        and "ValidatingAdmissionPolicy" in result.stderr
        and (says in result.stderr)
    )


@pytest.fixture(scope="module", params=versions_params())
def policed(request: pytest.FixtureRequest) -> Iterator[Policed]:
    plane = plane_for(request, request.param)
    run = uuid.uuid4().hex[:8]
    policed = Policed(plane, plane.create_namespace(f"npuconfig-{run}"), run)
    objects = in_module_scope(run)
    try:
        for obj in objects:
            plane.kubectl("apply", "-f", "-", input=json.dumps(obj))
        bad = policed.body("ResourceClaim", [entry({})])
        wait_for(
            lambda: refused(policed.write("create", bad), "parameters.apiVersion: required"),
            timeout=POLICY_LOAD_S,
            what=f"the NpuConfig policy on {request.param} to refuse a bad claim",
        )
        yield policed
    finally:
        for obj in objects:
            plane.kubectl("delete", obj["kind"], obj["metadata"]["name"], check=False)
        plane.kubectl("delete", "deviceclass", "-l", f"{LABEL}={run}", check=False)
        plane.delete_namespace(policed.namespace)


@pytest.mark.parametrize("kind", CONFIG_LIST)
@pytest.mark.parametrize("form", VALID)
def test_a_valid_npu_config_is_accepted(policed: Policed, kind: str, form: str) -> None:
    created = policed.create(kind, [entry(VALID[form])])
    assert created.returncode == 0, created.stderr


@pytest.mark.parametrize("kind", CONFIG_LIST)
@pytest.mark.parametrize("form", BAD)
def test_a_bad_npu_config_is_refused_naming_the_field(
    policed: Policed, kind: str, form: str
) -> None:
    parameters, field, says = BAD[form]
    created = policed.create(kind, [entry(GOOD), entry(parameters)])
    message = f"{CONFIG_LIST[kind]}[1].opaque.parameters.{field}: {says}"
    assert refused(created, message), created.stderr or created.stdout


def test_another_drivers_entry_is_not_looked_at(policed: Policed) -> None:
    others = [entry(GARBAGE, driver="gpu.example.com"), entry(GOOD)]
    created = policed.create("ResourceClaim", others)
    assert created.returncode == 0, created.stderr
    bad = policed.create("ResourceClaim", [*others, entry({**GOOD, "kind": "Npu"})])
    assert refused(bad, 'spec.devices.config[2].opaque.parameters.kind: "Npu" is not'), bad.stderr
    assert "config[0]" not in bad.stderr


def test_every_bad_entry_is_named(policed: Policed) -> None:
    configs = [entry({"kind": "NpuConfig"}), entry(GOOD), entry({**GOOD, "sharing": None})]
    created = policed.create("ResourceClaimTemplate", configs)
    assert refused(created, "spec.spec.devices.config[0].opaque.parameters.apiVersion: required")
    assert "spec.spec.devices.config[2].opaque.parameters.sharing: must be an object" in (
        created.stderr
    )
    assert "config[1]" not in created.stderr


def test_a_device_class_updated_to_a_bad_config_is_refused(policed: Policed) -> None:
    device_class = policed.body("DeviceClass", [entry(GOOD)])
    assert policed.write("create", device_class).returncode == 0
    device_class["spec"]["config"].append(entry({**GOOD, "sharing": {"strategy": "Sometimes"}}))
    updated = policed.write("replace", device_class)
    assert refused(updated, 'spec.config[1].opaque.parameters.sharing.strategy: "Sometimes"'), (
        updated.stderr
    )
    stored = policed.plane.kubectl("get", "deviceclass", device_class["metadata"]["name"],
                                   "-o", "json")  # fmt: skip
    assert json.loads(stored.stdout)["spec"]["config"] == [entry(GOOD)]
    device_class["spec"]["config"][1] = entry({**GOOD, "sharing": {"strategy": "Shared"}})
    assert policed.write("replace", device_class).returncode == 0


def test_an_object_stored_before_the_policy_may_still_be_updated(policed: Policed) -> None:
    # Unlabelled, the object is not matched: it stands for one stored before the policy came.
    # Its labels and finalizers must stay writable (a claim's spec cannot change at all).
    claim = policed.body("ResourceClaim", [entry({"kind": "Old"})])
    del claim["metadata"]["labels"]
    assert policed.write("create", claim).returncode == 0
    claim["metadata"]["labels"] = {LABEL: policed.run}  # now matched, old and new alike
    for finalizers in (["npu-dra.test/hold"], []):
        claim["metadata"]["finalizers"] = finalizers
        updated = policed.write("replace", claim)
        assert updated.returncode == 0, updated.stderr
    meta = claim["metadata"]
    stored = policed.plane.kubectl("get", "resourceclaim", meta["name"], "-n", meta["namespace"],
                                   "-o", "json")  # fmt: skip
    assert json.loads(stored.stdout)["metadata"]["labels"] == {LABEL: policed.run}


def allocated(claim: dict[str, Any], configs: list[dict[str, Any]]) -> dict[str, Any]:
    """The claim with the status the scheduler writes when it allocates it: `configs` are the
    class's and the claim's entries, copied with their source."""
    results = [{"request": "npu", "driver": DRIVER, "pool": "node-a", "device": "npu-0"}]
    copied = [{"source": "FromClaim", **c} for c in configs]
    status = {"allocation": {"devices": {"results": results, "config": copied}}}
    return {**claim, "status": status}


def write_status(policed: Policed, claim: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return policed.plane.kubectl("replace", "--subresource=status", "-f", "-",
                                 input=json.dumps(claim), check=False)  # fmt: skip


def test_an_allocation_written_with_a_bad_npu_config_is_refused(policed: Policed) -> None:
    # The plugin prepares from the allocation's copy of the configs (status.allocation), which
    # only the status subresource writes: a writer of claims' status (the scheduler, or anyone
    # granted resourceclaims/status) must not hand it what the claim's own write could not.
    claim = policed.body("ResourceClaim", [])
    created = policed.write("create", claim)
    assert created.returncode == 0, created.stderr
    name = claim["metadata"]["name"]
    got = policed.plane.kubectl("get", "resourceclaim", name, "-n", policed.namespace, "-o", "json")
    stored = json.loads(got.stdout)
    bad = write_status(policed, allocated(stored, [entry(GOOD), entry({**GOOD, "kind": "Npu"})]))
    says = 'status.allocation.devices.config[1].opaque.parameters.kind: "Npu" is not NpuConfig'
    assert refused(bad, says), bad.stderr or bad.stdout
    good = write_status(
        policed, allocated(stored, [entry(GOOD), entry(GARBAGE, "gpu.example.com")])
    )
    assert good.returncode == 0, good.stderr


# --- the chart -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chart(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    binary = build_helm()
    if isinstance(binary, str):
        pytest.fail(binary, pytrace=False)
    return Helm(binary, tmp_path_factory.mktemp("helm-home"))


def rendered_policy(chart: Helm, **values: Any) -> list[dict[str, Any]]:
    return [
        without_helm_labels(o)
        for o in chart.template(values=values)
        if o["kind"].startswith("ValidatingAdmissionPolicy")
        and o["metadata"]["name"].endswith("-npuconfig")
    ]


def test_the_chart_renders_the_manifests_policy(chart: Helm) -> None:
    assert rendered_policy(chart) == shipped()


def test_the_charts_policy_follows_the_driver_name_and_the_names(chart: Helm) -> None:
    rendered = rendered_policy(chart, driverName="npu.example.com", fullnameOverride="lab")
    expected = copy.deepcopy(shipped())
    policy, binding = expected
    policy["spec"]["variables"][0]["expression"] = '"npu.example.com"'
    policy["metadata"]["name"] = binding["metadata"]["name"] = "lab-npuconfig"
    binding["spec"]["policyName"] = "lab-npuconfig"
    assert rendered == expected


@pytest.mark.parametrize(
    "values", [{"resourceSlicePolicy": {"enabled": False}}, {"devicePlugin": {"enabled": True}}]
)
def test_the_chart_leaves_the_policy_out_with_the_other_policies(
    chart: Helm, values: dict[str, Any]
) -> None:
    assert rendered_policy(chart, **values) == []
