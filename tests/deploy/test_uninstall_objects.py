"""What an uninstall needs from deploy/manifests and the chart (docs/uninstall.md): the
plugin is told its own DaemonSet's name and namespace, may read that one DaemonSet and nothing
more, and its pod is given time to outlive the pods using its devices."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.helm_cli import Helm, HelmError
from tests.deploy.objects import container, manifests, of_kind, only

Obj = dict[str, Any]


def uninstall_objects(objects: list[Obj]) -> tuple[Obj, Obj, Obj]:
    """The DaemonSet, and the Role and RoleBinding that let its pods read it."""
    (role,) = of_kind(objects, "Role")
    (binding,) = of_kind(objects, "RoleBinding")
    return only(objects, "DaemonSet"), role, binding


def assert_the_plugin_may_read_only_its_own_daemonset(objects: list[Obj]) -> None:
    daemonset, role, binding = uninstall_objects(objects)
    name, namespace = daemonset["metadata"]["name"], daemonset["metadata"]["namespace"]
    env = {e["name"]: e for e in container(daemonset)["env"]}
    assert env["DAEMONSET_NAME"]["value"] == name
    assert env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    assert role["metadata"]["namespace"] == namespace
    assert role["rules"] == [
        {
            "apiGroups": ["apps"],
            "resources": ["daemonsets"],
            "resourceNames": [name],
            "verbs": ["get", "list", "watch"],
        }
    ]
    assert binding["metadata"]["namespace"] == namespace
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    account = daemonset["spec"]["template"]["spec"]["serviceAccountName"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account, "namespace": namespace}
    ]


def grace_period(objects: list[Obj]) -> int:
    return int(
        only(objects, "DaemonSet")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    )


def test_the_manifests_plugin_may_read_only_its_own_daemonset() -> None:
    assert_the_plugin_may_read_only_its_own_daemonset(manifests())


def test_the_manifests_give_an_hour_to_the_pods_using_npus_at_uninstall() -> None:
    assert grace_period(manifests()) == 3600


def test_in_another_release_and_namespace_the_names_follow(helm: Helm) -> None:
    rendered = helm.template(
        release="lab",
        namespace="npu-system",
        values={"namespace": {"create": False, "name": ""}, "fullnameOverride": "npu-lab"},
    )
    assert only(rendered, "DaemonSet")["metadata"]["name"] == "npu-lab"
    assert_the_plugin_may_read_only_its_own_daemonset(rendered)


def test_the_grace_period_is_a_value(helm: Helm) -> None:
    assert grace_period(helm.template(set_values=["uninstallGracePeriodSeconds=86400"])) == 86400


def test_a_grace_period_too_short_to_unprepare_is_refused(helm: Helm) -> None:
    with pytest.raises(HelmError, match="/uninstallGracePeriodSeconds"):
        helm.template(set_values=["uninstallGracePeriodSeconds=5"])


def test_the_classic_device_plugin_gets_no_daemonset_reader(helm: Helm) -> None:
    rendered = helm.template(set_values=["devicePlugin.enabled=true"])
    assert not list(of_kind(rendered, "Role"))
