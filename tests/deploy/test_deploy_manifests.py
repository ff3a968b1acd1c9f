"""deploy/manifests agrees with the code it deploys: the DaemonSet's args are flags the CLI
parses, its env vars are the ones the code reads, the paths it names are mounted from the same
host paths, its probe asks the plugin's own health service, and RBAC, policy and DaemonSet name
the same ServiceAccount."""

from __future__ import annotations

from typing import Any

import pytest

from npu_dra.adapters.grpc.liveness_server import LIVENESS_SERVICES, READINESS_SERVICE
from npu_dra.app.cli import build_parser
from npu_dra.app.options import COMMANDS, OPTIONS, Hardware, Settings, settings_from
from npu_dra.domain.device_kinds import class_selector, kinds_of
from tests.deploy.objects import (
    binding_named_as,
    container,
    expanded_argv,
    host_path_mounts,
    key,
    manifest_files,
    manifests,
    of_kind,
    only,
    policy_on,
)

NOT_FLAGS = {"LD_LIBRARY_PATH"}  # for npu-smi's libraries, not read by npu-dra
NAMESPACE = "ascend-dra"
SERVICE_ACCOUNT = "ascend-npu-dra-kubeletplugin"


def daemonset() -> dict[str, Any]:
    return only(manifests(), "DaemonSet")


def settings() -> Settings:
    argv = expanded_argv(daemonset(), {"NODE_NAME": "node-a"})
    assert argv[0] == "npu-dra"
    args = build_parser().parse_args(argv[1:])
    assert args.func.__module__ == "npu_dra.app.commands.kubelet_plugin"
    return settings_from(args)


def test_the_daemonset_args_are_flags_the_cli_parses_to_the_seed_settings() -> None:
    parsed = settings()
    assert parsed.node_name == "node-a"
    assert (parsed.driver_name, parsed.device_profile) == ("npu.huawei.com", "npu")
    assert str(parsed.registrar_dir) == "/var/lib/kubelet/plugins_registry"
    assert str(parsed.plugins_dir) == "/var/lib/kubelet/plugins"
    assert str(parsed.cdi_root) == "/var/run/cdi"
    assert parsed.hardware == Hardware("auto")  # DCMI where libdcmi.so works, else npu-smi
    assert parsed.cluster == "kubernetes"
    assert parsed.kubeconfig == ""  # in-cluster: the pod's ServiceAccount token


def test_no_flag_is_given_twice_and_every_one_is_the_codes() -> None:
    names = [arg.split("=", 1)[0] for arg in container(daemonset())["args"]]
    assert len(names) == len(set(names))
    kubelet_plugin = [OPTIONS[dest] for dest in COMMANDS["kubelet-plugin"]]
    assert set(names) <= {flag for option in kubelet_plugin for flag in option.flags}


def test_every_env_var_is_one_the_code_reads() -> None:
    env = container(daemonset())["env"]
    names = {e["name"] for e in env}
    assert names - NOT_FLAGS <= {OPTIONS[dest].env for dest in COMMANDS["kubelet-plugin"]}
    node_name = next(e for e in env if e["name"] == "NODE_NAME")
    assert node_name["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"


@pytest.mark.parametrize(
    "setting",
    [
        "registrar_dir",
        "plugins_dir",
        "cdi_root",
        "sysfs_root",
        "dev_root",
        "npu_smi_path",
        "api_lock_dir",
    ],
)
def test_each_host_path_the_plugin_uses_is_mounted_at_the_same_path(setting: str) -> None:
    # The DRA socket the plugin announces (<plugins dir>/<driver>/dra.sock) must be the same
    # file for the kubelet on the host.
    path = str(getattr(settings(), setting))
    assert host_path_mounts(daemonset()).get(path) == path


def test_the_liveness_probe_asks_the_plugins_health_service_on_its_port() -> None:
    spec = container(daemonset())
    probe = spec["livenessProbe"]["grpc"]
    assert probe["port"] == settings().healthcheck_port > 0
    assert probe["service"] in LIVENESS_SERVICES
    assert "ports" not in spec  # a hostPort on the host network: it would block a surge pod


def test_the_readiness_probe_asks_the_plugins_readiness_service_on_the_same_port() -> None:
    spec = container(daemonset())
    probe = spec["readinessProbe"]["grpc"]
    assert (probe["port"], probe["service"]) == (settings().healthcheck_port, READINESS_SERVICE)


def test_a_rolling_update_starts_the_new_plugin_pod_beside_the_old_one() -> None:
    """A surge, never a gap: each plugin pod names its sockets after its UID (POD_UID)."""
    strategy = daemonset()["spec"]["updateStrategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"] == {"maxUnavailable": 0, "maxSurge": 1}
    env = {e["name"]: e for e in container(daemonset())["env"]}
    assert env["POD_UID"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.uid"}}
    assert env["SEAMLESS_UPGRADE"]["value"] == "auto"


def test_resources_are_requested_and_memory_is_limited() -> None:
    resources = container(daemonset())["resources"]
    assert set(resources["requests"]) == {"cpu", "memory"}
    assert set(resources["limits"]) == {"memory"}


def test_the_cluster_role_grants_only_what_the_plugin_calls() -> None:
    role = only(manifests(), "ClusterRole")
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    slices = {
        ("resource.k8s.io", "resourceslices", verb)
        for verb in ("list", "watch", "create", "update", "delete")
    }
    assert granted == {
        ("resource.k8s.io", "resourceclaims", "get"),
        ("resource.k8s.io", "resourceclaims/status", "patch"),  # status.devices (KEP-4817)
        ("resource.k8s.io", "resourceclaims/driver", "associated-node:patch"),  # its, from 1.36
        ("", "nodes", "get"),
        ("events.k8s.io", "events", "create"),  # Node and claim events (adapters/.../events.py)
        *slices,
    }


def test_status_devices_are_granted_for_this_driver_only() -> None:
    [rule] = [
        r
        for r in only(manifests(), "ClusterRole")["rules"]
        if "resourceclaims/driver" in r["resources"]
    ]
    assert rule["resourceNames"] == ["npu.huawei.com"]


def test_rbac_policy_and_daemonset_name_one_service_account() -> None:
    objects = manifests()
    account = only(objects, "ServiceAccount")
    assert (account["metadata"]["namespace"], account["metadata"]["name"]) == (
        NAMESPACE,
        SERVICE_ACCOUNT,
    )
    binding = only(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == only(objects, "ClusterRole")["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}
    ]
    assert daemonset()["spec"]["template"]["spec"]["serviceAccountName"] == SERVICE_ACCOUNT
    policy = policy_on(objects, "resourceslices")
    (condition,) = policy["spec"]["matchConditions"]
    assert f'"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"' in condition["expression"]
    policy_binding = binding_named_as(objects, policy)
    assert policy_binding["spec"]["policyName"] == policy["metadata"]["name"]
    assert policy_binding["spec"]["validationActions"] == ["Deny"]


def test_the_policy_covers_every_write_of_resourceslices() -> None:
    (rule,) = policy_on(manifests(), "resourceslices")["spec"]["matchConstraints"]["resourceRules"]
    assert rule["resources"] == ["resourceslices"]
    assert rule["apiVersions"] == ["*"]
    assert set(rule["operations"]) == {"CREATE", "UPDATE", "DELETE"}


def test_the_event_policy_covers_every_event_write_the_role_grants_to_the_same_account() -> None:
    objects = manifests()
    policy = policy_on(objects, "events")
    (rule,) = policy["spec"]["matchConstraints"]["resourceRules"]
    assert (rule["apiGroups"], rule["resources"], rule["apiVersions"]) == (
        ["events.k8s.io"],
        ["events"],
        ["*"],
    )
    granted = {
        verb.upper()
        for r in only(objects, "ClusterRole")["rules"]
        if "events" in r["resources"]
        for verb in r["verbs"]
    }
    assert granted <= set(rule["operations"])
    assert policy["spec"]["failurePolicy"] == "Fail"
    (condition,) = policy["spec"]["matchConditions"]
    assert f'"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"' in condition["expression"]
    binding = binding_named_as(objects, policy)
    assert binding["spec"]["policyName"] == policy["metadata"]["name"]
    assert binding["spec"]["validationActions"] == ["Deny"]


def test_the_claim_status_policy_covers_the_status_grant_of_the_same_account() -> None:
    objects = manifests()
    [policy] = [
        p
        for p in of_kind(objects, "ValidatingAdmissionPolicy")
        if p["metadata"]["name"].endswith("-claim-status")
    ]
    (rule,) = policy["spec"]["matchConstraints"]["resourceRules"]
    assert rule["resources"] == ["resourceclaims/status"]
    assert (rule["apiGroups"], rule["operations"]) == (["resource.k8s.io"], ["UPDATE"])
    granted = {
        verb
        for r in only(objects, "ClusterRole")["rules"]
        if "resourceclaims/status" in r["resources"]
        for verb in r["verbs"]
    }
    assert granted == {"patch"}  # a patch is admitted as an UPDATE
    (condition,) = policy["spec"]["matchConditions"]
    assert f'"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"' in condition["expression"]
    assert policy["spec"]["failurePolicy"] == "Fail"
    assert binding_named_as(objects, policy)["spec"]["validationActions"] == ["Deny"]


def test_the_slice_policy_pins_the_pool_to_the_tokens_node() -> None:
    policy = policy_on(manifests(), "resourceslices")
    variables = {v["name"]: v["expression"] for v in policy["spec"]["variables"]}
    assert "object.spec.?pool.?name" in variables["newPool"]
    expressions = [v["expression"] for v in policy["spec"]["validations"]]
    assert "variables.newPool == variables.tokenNode" in expressions


def test_one_device_class_per_kind_and_the_seeds_selects_whole_chips() -> None:
    """The classes select as domain/device_kinds says (tests/unit/domain/test_device_kinds.py
    runs those selectors on published devices); the seed's keeps its name."""
    driver = settings().driver_name
    classes = {c["metadata"]["name"]: c for c in of_kind(manifests(), "DeviceClass")}
    assert list(classes) == [k.class_name(driver) for k in kinds_of("npu")]
    assert next(iter(classes)) == "npu.huawei.com"
    for kind in kinds_of("npu"):
        (selector,) = classes[kind.class_name(driver)]["spec"]["selectors"]
        written = " ".join(selector["cel"]["expression"].split())
        assert written == class_selector(kind, driver=driver, profile="npu")


def test_namespaced_objects_live_in_the_namespace_applied_first() -> None:
    first = manifests()[0]
    assert key(first) == ("Namespace", "", NAMESPACE)
    assert manifest_files()[0].name.startswith("00-")
    for kind in ("ServiceAccount", "DaemonSet"):
        for obj in of_kind(manifests(), kind):
            assert obj["metadata"]["namespace"] == NAMESPACE
    assert first["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


def test_the_kubelets_device_plugin_state_is_mounted_read_only_where_the_plugin_reads_it() -> None:
    """A node moved from the classic plugin: the kubelet's device checkpoint and pod directories
    (under the parent of --kubelet-plugins-directory-path) tell which chips pods still hold."""
    kubelet_dir = settings().plugins_dir.parent
    mounts = {m["mountPath"]: m for m in container(daemonset())["volumeMounts"]}
    for below in ("device-plugins", "pods"):
        path = str(kubelet_dir / below)
        assert host_path_mounts(daemonset()).get(path) == path
        assert mounts[path]["readOnly"] is True
