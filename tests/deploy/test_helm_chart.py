"""The Helm chart: it lints, renders exactly deploy/manifests with its defaults, rejects bad
values by its schema, passes its values on to flags the code parses, and renders the classic
device plugin instead of the DRA plugin when asked."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from npu_dra.app.cli import build_parser
from npu_dra.app.options import Hardware, Settings, add_options, settings_from
from npu_dra.domain.device_kinds import class_selector, kinds_of
from tests.deploy.helm_cli import CHART, HELM_LABELS, Helm, HelmError, without_helm_labels
from tests.deploy.objects import (
    DEVICE_PLUGIN_DAEMONSET,
    binding_named_as,
    by_key,
    container,
    expanded_argv,
    host_path_mounts,
    key,
    load,
    manifests,
    of_kind,
    only,
    policy_on,
)
from tests.e2e.seed_cluster import PREFETCH_RULE


def test_helm_lint_passes_strictly(helm: Helm) -> None:
    result = helm.run("lint", "--strict", str(CHART))
    assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout


def test_the_default_render_is_the_plain_manifests_plus_helm_labels(helm: Helm) -> None:
    rendered = helm.template()
    for obj in rendered:  # the only difference, and it is there on every object
        assert set(obj["metadata"]["labels"]) >= HELM_LABELS, key(obj)
    chart = by_key(without_helm_labels(o) for o in rendered)
    plain = by_key(manifests())
    assert sorted(chart) == sorted(plain)
    for object_key, obj in plain.items():
        assert chart[object_key] == obj, object_key


def test_the_release_name_does_not_change_the_default_objects(helm: Helm) -> None:
    # The defaults name the objects of deploy/manifests whatever the release, so the chart and
    # the manifests manage the same objects.
    rendered = helm.template(release="other")
    assert sorted(key(o) for o in rendered) == sorted(key(o) for o in manifests())


def test_helm_install_n_puts_the_namespaced_objects_in_that_namespace(helm: Helm) -> None:
    """`-n X`: the objects go to X, which Helm makes or finds, so the chart renders no
    Namespace; the cluster-scoped objects and every name stay those of the manifests."""
    rendered = helm.template(release="other", namespace="elsewhere")
    assert "Namespace" not in {o["kind"] for o in rendered}
    expected = [
        (kind, "elsewhere" if namespace else "", name)
        for kind, namespace, name in (key(o) for o in manifests())
        if kind != "Namespace"
    ]
    assert sorted(key(o) for o in rendered) == sorted(expected)
    for binding in (o for o in rendered if o["kind"].endswith("RoleBinding")):
        assert {s["namespace"] for s in binding["subjects"]} == {"elsewhere"}


@pytest.mark.parametrize(
    ("setting", "complaint"),
    [
        ("healthcheckPort=x", "/healthcheckPort"),
        ("healthcheckPort=70000", "/healthcheckPort"),
        ("metricsPort=0", "/metricsPort"),
        ("serviceMonitor.interval=often", "/serviceMonitor/interval"),
        ("taintEffects=Alarm=NoSchedule", "/taintEffects"),
        ("logLevel=loud", "/logLevel"),
        ("hardware=nvidia-smi", "/hardware"),
        ("cdiRoot=etc/cdi", "/cdiRoot"),
        ("driverName=NPU_Huawei", "/driverName"),
        ("seamlessUpgrade=sometimes", "/seamlessUpgrade"),
        ("healthCheckPort=1", "healthCheckPort"),  # a typo is an error, not an ignored value
        ("devicePlugin.driverMounts[0]=relative", "/devicePlugin/driverMounts/0"),
    ],
)
def test_the_schema_rejects_a_bad_value(helm: Helm, setting: str, complaint: str) -> None:
    with pytest.raises(HelmError, match="schema") as raised:
        helm.template(set_values=[setting])
    assert complaint in str(raised.value)


@pytest.mark.parametrize(
    ("values", "reasons"),
    [
        ({"metricsPort": 0}, ["at '/metricsPort': value must be -1", "got 0, want 1"]),
        ({"healthcheckPort": 0}, ["at '/healthcheckPort': value must be -1", "got 0, want 1"]),
        (
            {"deviceProfile": "gpu", "devicePlugin": {"enabled": True}},
            [
                "at '/deviceProfile': value must be 'npu'",
                "'/devicePlugin/enabled': value must be false",
            ],
        ),
    ],
)
def test_a_refusal_says_what_would_be_accepted(
    helm: Helm, values: dict[str, Any], reasons: list[str]
) -> None:
    """Not a bare `'not' failed` or `'allOf' failed`: helm prints each alternative's reason."""
    with pytest.raises(HelmError, match="schema") as raised:
        helm.template(values=values)
    for reason in reasons:
        assert reason in str(raised.value)
    assert "'not' failed" not in str(raised.value)
    assert "'allOf' failed" not in str(raised.value)


def test_a_string_port_is_rejected_even_from_a_values_file(helm: Helm) -> None:
    with pytest.raises(HelmError, match="/healthcheckPort"):
        helm.template(values={"healthcheckPort": "x"})


def kubelet_plugin_settings(rendered: list[dict[str, Any]]) -> Settings:
    argv = expanded_argv(only(rendered, "DaemonSet"), {"NODE_NAME": "node-a"})
    return settings_from(build_parser().parse_args(argv[1:]))


def test_values_reach_the_plugins_flags_and_mounts(helm: Helm) -> None:
    rendered = helm.template(
        values={
            "driverName": "npu.example.com",
            "deviceProfile": "npu",
            "cdiRoot": "/etc/cdi",
            "kubeletRegistrarDirectoryPath": "/data/kubelet/plugins_registry",
            "kubeletPluginsDirectoryPath": "/data/kubelet/plugins",
            "healthcheckPort": 52000,
            "hardware": "fake:/etc/npu-dra/node.yaml",
            "npuSmiPath": "/opt/bin/npu-smi",
            "ascendRoot": "/opt/Ascend",
            "healthInterval": 2.5,
            "logLevel": "debug",
            "logFormat": "json",
            "nodeSelector": {"accelerator": "huawei-Ascend910"},
            "tolerations": [{"key": "npu", "operator": "Exists"}],
        }
    )
    parsed = kubelet_plugin_settings(rendered)
    assert parsed.driver_name == "npu.example.com"
    assert (str(parsed.cdi_root), parsed.healthcheck_port) == ("/etc/cdi", 52000)
    assert str(parsed.hardware.fake_file) == "/etc/npu-dra/node.yaml"
    assert (str(parsed.npu_smi_path), parsed.health_interval) == ("/opt/bin/npu-smi", 2.5)
    assert (parsed.log_level, parsed.log_format) == ("debug", "json")
    daemonset = only(rendered, "DaemonSet")
    mounts = host_path_mounts(daemonset)
    for path in (parsed.registrar_dir, parsed.plugins_dir, parsed.cdi_root, "/opt/bin/npu-smi"):
        assert mounts[str(path)] == str(path)
    assert mounts["/opt/Ascend"] == "/opt/Ascend"
    spec = container(daemonset)
    assert spec["livenessProbe"]["grpc"]["port"] == 52000
    assert spec["readinessProbe"]["grpc"] == {"port": 52000, "service": "readiness"}
    library_path = next(e["value"] for e in spec["env"] if e["name"] == "LD_LIBRARY_PATH")
    assert all(p.startswith("/opt/Ascend/") for p in library_path.split(":"))
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"accelerator": "huawei-Ascend910"}
    assert pod["tolerations"] == [{"key": "npu", "operator": "Exists"}]
    classes = list(of_kind(rendered, "DeviceClass"))
    assert [c["metadata"]["name"] for c in classes] == [
        k.class_name("npu.example.com") for k in kinds_of("npu")
    ]
    for kind, device_class in zip(kinds_of("npu"), classes, strict=True):
        written = " ".join(device_class["spec"]["selectors"][0]["cel"]["expression"].split())
        assert written == class_selector(kind, driver="npu.example.com", profile="npu")


def test_healthcheck_port_minus_one_renders_no_probe(helm: Helm) -> None:
    rendered = helm.template(set_values=["healthcheckPort=-1"])
    spec = container(only(rendered, "DaemonSet"))
    assert "livenessProbe" not in spec
    assert "readinessProbe" not in spec
    assert "ports" not in spec
    assert kubelet_plugin_settings(rendered).healthcheck_port == -1


def test_extra_env_and_the_upgrade_mode_reach_the_plugins_container(helm: Helm) -> None:
    rendered = helm.template(
        values={
            "extraEnv": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}],
            "seamlessUpgrade": "off",
        }
    )
    env = {e["name"]: e for e in container(only(rendered, "DaemonSet"))["env"]}
    assert env["HTTPS_PROXY"]["value"] == "http://proxy:3128"
    assert env["SEAMLESS_UPGRADE"]["value"] == "off"
    assert env["POD_UID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.uid"


def test_in_the_release_namespace_every_name_follows(helm: Helm) -> None:
    rendered = helm.template(
        release="gpu-lab",
        namespace="npu-system",
        values={"namespace": {"create": False, "name": ""}, "fullnameOverride": "npu-lab"},
    )
    kinds = sorted(o["kind"] for o in rendered)
    assert "Namespace" not in kinds
    for obj in rendered:
        if obj["kind"] in ("ServiceAccount", "DaemonSet"):
            assert obj["metadata"]["namespace"] == "npu-system"
    assert only(rendered, "ClusterRoleBinding")["subjects"] == [
        {"kind": "ServiceAccount", "name": "npu-lab", "namespace": "npu-system"}
    ]
    policy = policy_on(rendered, "resourceslices")
    (condition,) = policy["spec"]["matchConditions"]
    assert '"system:serviceaccount:npu-system:npu-lab"' in condition["expression"]
    policy_binding = binding_named_as(rendered, policy)
    assert policy_binding["spec"]["policyName"] == policy["metadata"]["name"]
    daemonset = only(rendered, "DaemonSet")
    assert daemonset["spec"]["template"]["spec"]["serviceAccountName"] == "npu-lab"


def test_in_the_release_namespace_the_event_policy_follows_the_account(helm: Helm) -> None:
    rendered = helm.template(
        release="gpu-lab",
        namespace="npu-system",
        values={"namespace": {"create": False, "name": ""}, "fullnameOverride": "npu-lab"},
    )
    policy = policy_on(rendered, "events")
    assert policy["metadata"]["name"] == "npu-lab-events"
    (condition,) = policy["spec"]["matchConditions"]
    assert '"system:serviceaccount:npu-system:npu-lab"' in condition["expression"]
    binding = binding_named_as(rendered, policy)
    assert binding["spec"]["policyName"] == "npu-lab-events"
    assert binding["spec"]["validationActions"] == ["Deny"]


def test_the_device_class_and_the_policy_can_be_left_out(helm: Helm) -> None:
    rendered = helm.template(
        set_values=["deviceClass.create=false", "resourceSlicePolicy.enabled=false"]
    )
    kinds = {o["kind"] for o in rendered}
    assert "DeviceClass" not in kinds
    assert not kinds & {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
    assert "DaemonSet" in kinds


def test_device_plugin_mode_renders_the_device_plugin_daemonset_instead(helm: Helm) -> None:
    rendered = helm.template(set_values=["devicePlugin.enabled=true"])
    assert sorted(o["kind"] for o in rendered) == ["DaemonSet", "Namespace"]  # no RBAC at all
    daemonset = without_helm_labels(only(rendered, "DaemonSet"))
    (plain,) = load([DEVICE_PLUGIN_DAEMONSET])
    # deploy/device-plugin/daemonset.yaml lives in kube-system; the chart keeps its namespace.
    assert daemonset["metadata"].pop("namespace") == "ascend-dra"
    assert plain["metadata"].pop("namespace") == "kube-system"
    assert daemonset == plain


def test_device_plugin_values_reach_its_env_and_parse(helm: Helm) -> None:
    rendered = helm.template(
        values={
            "devicePlugin": {
                "enabled": True,
                "driverMounts": ["/usr/local/Ascend/driver", "/usr/local/dcmi:/opt/dcmi"],
                "cdi": {"enabled": True, "root": "/var/run/cdi"},
                "resourceName": "Ascend910=huawei.com/npu",
                "healthInterval": 3,
                "hardware": "fake:/etc/node.yaml",
                "logLevel": "DEBUG",
            }
        }
    )
    spec = container(only(rendered, "DaemonSet"))
    env = {e["name"]: e["value"] for e in spec["env"] if "value" in e}
    assert env["DRIVER_MOUNTS"] == "/usr/local/Ascend/driver,/usr/local/dcmi:/opt/dcmi"
    parser = argparse.ArgumentParser()
    add_options(parser, "device-plugin", env)
    config = settings_from(parser.parse_args([]))
    assert len(config.driver_mounts) == 2
    assert config.cdi_enabled
    assert str(config.cdi_root) == "/var/run/cdi"
    assert config.resource_name == "Ascend910=huawei.com/npu"
    assert (config.health_interval, config.hardware) == (
        3.0,
        Hardware("fake", Path("/etc/node.yaml")),
    )
    assert config.log_level == "debug"


def pod_rules(rendered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        rule
        for obj in rendered
        if obj["kind"] == "ClusterRole"
        for rule in obj["rules"]
        if "pods" in rule["resources"]
    ]


def test_claim_prefetch_brings_its_flag_and_the_pod_reads_it_needs_and_nothing_else(
    helm: Helm,
) -> None:
    default = helm.template()
    assert not kubelet_plugin_settings(default).claim_prefetch
    assert pod_rules(default) == []
    enabled = helm.template(set_values=["claimPrefetch=true"])
    assert kubelet_plugin_settings(enabled).claim_prefetch
    assert pod_rules(enabled) == [PREFETCH_RULE]  # what tests/e2e/test_claim_prefetch.py grants
