"""deploy/ on a real API server (Kubernetes v1.34.3): the manifests apply for real, the chart and
the examples server-side; a token of exactly the plugin's ServiceAccount, bound to the
DaemonSet's own pod on node A, writes ResourceSlices of node A only (the admission policy denies
node B), reads no Secret and updates no ResourceClaim (RBAC denies); and `npu-dra kubelet-plugin`,
run with the DaemonSet's args and that token, publishes node A's NPUs and prepares a claim the
scheduler allocated.

The objects are the seed's (namespace ascend-dra, DeviceClass npu.huawei.com): the module removes
what it created and leaves anything that was there before it (tests/deploy/on_cluster.py).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.deploy.helm_cli import Helm, build_helm
from tests.deploy.objects import DEVICE_PLUGIN_DAEMONSET, EXAMPLES, container, load, manifests, only
from tests.deploy.on_cluster import (
    ACCOUNT,
    DRIVER,
    NAMESPACE,
    PLUGIN_STOP_S,
    POLICY,
    USER,
    Deployment,
    RunningPlugin,
    denied_by_policy,
    deployed,
    exists,
    forbidden,
    kubectl_json,
    node_slices,
    probe_slice,
    published,
    running_plugin,
    unique,
)
from tests.support.controlplane import ControlPlane, wait_for
from tests.support.kubelet import Kubelet

NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name"


@dataclass
class WireClaim:  # what the kubelet sends for a claim
    namespace: str
    name: str
    uid: str


@pytest.fixture(scope="module")
def deployment(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    with deployed(control_plane, tmp_path_factory.mktemp("deploy-tokens")) as deployment:
        yield deployment


@pytest.fixture(scope="module")
def policy_in_force(deployment: Deployment) -> Deployment:
    """The API server loads a new policy asynchronously: wait until it denies (a dry run)."""
    attempt = json.dumps(probe_slice(unique("probe-b"), deployment.node_b))
    wait_for(
        lambda: denied_by_policy(
            deployment.as_plugin("create", "--dry-run=server", "-f", "-", stdin=attempt),
            says=f"node '{deployment.node_b}'",
        ),
        timeout=60,
        what=f"ValidatingAdmissionPolicy {POLICY} to deny",
    )
    return deployment


@pytest.fixture(scope="module")
def plugin(policy_in_force: Deployment) -> Iterator[RunningPlugin]:
    with running_plugin(policy_in_force) as running:
        yield running


# --- the objects apply ---------------------------------------------------------------------


def test_the_manifests_apply_and_the_daemonset_pod_is_admitted(deployment: Deployment) -> None:
    plane = deployment.plane
    for obj in manifests():
        meta = obj["metadata"]
        where = ["-n", meta["namespace"]] if "namespace" in meta else []
        assert exists(plane, obj["kind"], meta["name"], *where), (obj["kind"], meta["name"])
    # The controller made a pod for node A that passed admission as the DaemonSet wrote it:
    # privileged with host paths (Pod Security), its priority class, its ServiceAccount.
    pod = deployment.pod
    assert pod["spec"]["serviceAccountName"] == ACCOUNT
    assert pod["spec"]["priority"] == 2000001000  # system-node-critical
    assert pod["spec"]["containers"][0]["securityContext"]["privileged"] is True


def test_the_examples_and_the_device_plugin_daemonset_apply_server_side(
    deployment: Deployment,
) -> None:
    plane = deployment.plane
    result = plane.kubectl("apply", "--server-side", "--dry-run=server", "-f", str(EXAMPLES))
    kinds = [line.split("/")[0] for line in result.stdout.splitlines()]
    examples = load(sorted(EXAMPLES.glob("*.yaml")))
    assert kinds.count("resourceclaim.resource.k8s.io") == sum(
        o["kind"] == "ResourceClaim" for o in examples
    ), result.stdout
    assert kinds.count("pod") == sum(o["kind"] == "Pod" for o in examples) >= 6, result.stdout
    plane.kubectl("apply", "--server-side", "--dry-run=server", "-f", str(DEVICE_PLUGIN_DAEMONSET))
    # The dry run compiles the claims' CEL: a broken selector would have been refused.
    broken = only(load([EXAMPLES / "numa-claim.yaml"]), "ResourceClaim")
    selector = broken["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]
    selector["cel"]["expression"] = 'device.attributes["npu.huawei.com"].numaNode == "6" +'
    refused = plane.kubectl(
        "apply", "--server-side", "--dry-run=server", "-f", "-",
        input=json.dumps(broken), check=False,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "compil" in refused.stderr.lower(), refused.stderr


def test_the_example_pods_need_no_more_than_the_baseline_pod_security_level(
    deployment: Deployment,
) -> None:
    """The CDI spec gives a pod its devices and the driver's files, so the examples mount no
    host path and a namespace enforcing baseline admits them (the dry run runs admission)."""
    plane = deployment.plane
    baseline = plane.create_namespace(unique("npu-dra-baseline"))
    try:
        plane.kubectl("label", "namespace", baseline, "pod-security.kubernetes.io/enforce=baseline")
        objects = load(sorted(EXAMPLES.glob("*.yaml")))
        for obj in objects:
            if "namespace" in obj["metadata"]:
                obj["metadata"]["namespace"] = baseline
        rendered = "\n---\n".join(json.dumps(obj) for obj in objects)
        result = plane.kubectl(
            "apply", "--server-side", "--dry-run=server", "-f", "-", input=rendered, check=False
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.count("pod/") == sum(o["kind"] == "Pod" for o in objects), (
            result.stdout
        )
        # The same namespace refuses a pod that mounts a host path, as the examples once did.
        pod = only(load([EXAMPLES / "claim-template.yaml"]), "Pod")
        pod["metadata"]["namespace"] = baseline
        pod["spec"]["volumes"] = [{"name": "smi", "hostPath": {"path": "/usr/local/bin/npu-smi"}}]
        refused = plane.kubectl(
            "apply", "--server-side", "--dry-run=server", "-f", "-",
            input=json.dumps(pod), check=False,
        )  # fmt: skip
        assert "violates PodSecurity" in refused.stderr, refused.stderr
    finally:
        plane.delete_namespace(baseline)


@pytest.mark.timeout(1800)  # may build helm when tests/deploy did not run first
def test_the_chart_applies_server_side(
    deployment: Deployment, tmp_path_factory: pytest.TempPathFactory
) -> None:
    plane = deployment.plane
    binary = build_helm()
    if isinstance(binary, str):
        pytest.fail(binary, pytrace=False)
    helm = Helm(binary, tmp_path_factory.mktemp("helm-home"))

    def dry_run(rendered: str) -> None:
        plane.kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", input=rendered)

    dry_run(helm.template_text())  # the defaults: the objects just applied, as Helm labels them
    other = plane.create_namespace(unique("npu-dra-chart"))
    try:
        elsewhere = {
            "namespace": {"create": False, "name": ""},
            "fullnameOverride": other,
            "deviceClass": {"create": True, "name": f"{other}.npu.huawei.com"},
        }
        dry_run(helm.template_text(release="other", namespace=other, values=elsewhere))
        dry_run(
            helm.template_text(
                release="classic",
                namespace=other,
                values={**elsewhere, "devicePlugin": {"enabled": True}},
            )
        )
    finally:
        plane.delete_namespace(other)


# --- what the plugin's token may do -----------------------------------------------------------


def test_the_pod_bound_token_carries_node_a(deployment: Deployment) -> None:
    review = json.loads(deployment.as_plugin("auth", "whoami", "-o", "json").stdout)
    user = review["status"]["userInfo"]
    assert user["username"] == USER
    assert user["extra"][NODE_NAME_EXTRA] == [deployment.node_a]
    assert user["extra"]["authentication.kubernetes.io/pod-name"] == [
        deployment.pod["metadata"]["name"]
    ]


def test_the_token_creates_updates_and_deletes_its_own_nodes_slices(
    policy_in_force: Deployment,
) -> None:
    own = probe_slice(unique("probe-a"), policy_in_force.node_a, driver=DRIVER)
    created = policy_in_force.as_plugin("create", "-f", "-", "-o", "json", stdin=json.dumps(own))
    assert created.returncode == 0, created.stderr
    stored = json.loads(created.stdout)
    stored["spec"]["devices"].append({"name": "probe-1"})
    updated = policy_in_force.as_plugin("replace", "-f", "-", stdin=json.dumps(stored))
    assert updated.returncode == 0, updated.stderr
    deleted = policy_in_force.as_plugin("delete", "resourceslice", own["metadata"]["name"])
    assert deleted.returncode == 0, deleted.stderr


def test_the_token_may_not_create_update_or_delete_node_bs_slices(
    policy_in_force: Deployment,
) -> None:
    node_b = policy_in_force.node_b
    # A slice node B's own plugin published: RBAC would allow writing it, the policy does not.
    assert_may_not_write(
        policy_in_force,
        probe_slice(unique("probe-b"), node_b),
        says=f"may not write ResourceSlices of node '{node_b}'",
    )


def test_the_token_may_not_create_update_or_delete_another_drivers_slices_on_its_node(
    policy_in_force: Deployment,
) -> None:
    foreign = probe_slice(unique("probe-other-driver"), policy_in_force.node_a)
    # Another driver's plugin on the same node published it: the token may not touch it.
    name = assert_may_not_write(
        policy_in_force,
        foreign,
        says=f"may not write ResourceSlices of driver '{foreign['spec']['driver']}'",
    )
    policy_in_force.plane.kubectl("delete", "resourceslice", name)


def assert_may_not_write(deployment: Deployment, foreign: dict[str, Any], *, says: str) -> str:
    """The plugin's token may not create `foreign`, nor replace or delete it once its owner
    (here the admin) created it; it stays as it was. Returns its name."""
    plane = deployment.plane
    created = deployment.as_plugin("create", "-f", "-", stdin=json.dumps(foreign))
    assert denied_by_policy(created, says=says), created.stderr
    name: str = foreign["metadata"]["name"]
    plane.kubectl("create", "-f", "-", input=json.dumps(foreign))
    stored = kubectl_json(plane, "get", "resourceslice", name)
    stored["spec"]["devices"] = [{"name": "hijacked"}]
    updated = deployment.as_plugin("replace", "-f", "-", stdin=json.dumps(stored))
    assert denied_by_policy(updated, says=says), updated.stderr
    deleted = deployment.as_plugin("delete", "resourceslice", name)
    assert denied_by_policy(deleted, says=says), deleted.stderr
    after = kubectl_json(plane, "get", "resourceslice", name)
    assert after["spec"]["devices"] == [{"name": "probe-0"}]
    return name


def test_the_token_may_not_write_a_cluster_wide_slice(policy_in_force: Deployment) -> None:
    everywhere = probe_slice(unique("probe-all"), None)
    created = policy_in_force.as_plugin("create", "-f", "-", stdin=json.dumps(everywhere))
    assert denied_by_policy(created, says="no node (a cluster-wide pool)"), created.stderr


def test_a_token_not_bound_to_a_pod_writes_no_slice(policy_in_force: Deployment) -> None:
    own = probe_slice(unique("probe-a"), policy_in_force.node_a)
    created = policy_in_force.as_plugin(
        "create", "-f", "-", stdin=json.dumps(own), token=policy_in_force.unbound_token
    )
    assert denied_by_policy(created, says="only with a token bound to a Pod"), created.stderr


@pytest.mark.parametrize(
    ("verb", "resource", "allowed"),
    [
        ("get", "resourceclaims.resource.k8s.io", True),
        ("list", "resourceclaims.resource.k8s.io", False),
        ("update", "resourceclaims.resource.k8s.io", False),
        ("patch", "resourceclaims.resource.k8s.io", False),
        ("delete", "resourceclaims.resource.k8s.io", False),
        ("update", "resourceclaims.resource.k8s.io/status", False),
        ("list", "resourceslices.resource.k8s.io", True),
        ("watch", "resourceslices.resource.k8s.io", True),
        ("create", "resourceslices.resource.k8s.io", True),
        ("update", "resourceslices.resource.k8s.io", True),
        ("delete", "resourceslices.resource.k8s.io", True),
        ("patch", "resourceslices.resource.k8s.io", False),
        ("deletecollection", "resourceslices.resource.k8s.io", False),
        ("get", "nodes", True),
        ("list", "nodes", False),
        ("update", "nodes", False),
        ("get", "secrets", False),
        ("list", "pods", False),
        ("create", "deviceclasses.resource.k8s.io", False),
    ],
)
def test_rbac_grants_the_token_exactly_the_plugins_calls(
    deployment: Deployment, verb: str, resource: str, allowed: bool
) -> None:
    resource, _, subresource = resource.partition("/")
    answer = deployment.as_plugin(
        "auth", "can-i", verb, resource, f"--subresource={subresource}", "--all-namespaces"
    )
    assert answer.stdout.strip() == ("yes" if allowed else "no"), answer.stderr


def test_the_token_reads_no_secret(deployment: Deployment) -> None:
    listed = deployment.as_plugin("get", "secrets", "-n", "kube-system")
    assert forbidden(listed, verb="list", resource="secrets"), listed.stderr
    got = deployment.as_plugin("get", "secret", "any", "-n", NAMESPACE)
    assert forbidden(got, verb="get", resource="secrets"), got.stderr


def test_the_token_reads_claims_but_updates_none(deployment: Deployment) -> None:
    plane = deployment.plane
    claim = only(load([EXAMPLES / "claim-template.yaml"]), "ResourceClaimTemplate")["spec"]
    name = unique("claim")
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NAMESPACE},
        **claim,
    }
    plane.kubectl("create", "-f", "-", input=json.dumps(body))
    try:
        read = deployment.as_plugin("get", "resourceclaim", name, "-n", NAMESPACE, "-o", "json")
        assert read.returncode == 0, read.stderr  # what NodePrepareResources needs
        stored = json.loads(read.stdout)
        stored["metadata"]["labels"] = {"tampered": "yes"}
        replaced = deployment.as_plugin("replace", "-f", "-", stdin=json.dumps(stored))
        assert forbidden(replaced, verb="update", resource="resourceclaims"), replaced.stderr
        deleted = deployment.as_plugin("delete", "resourceclaim", name, "-n", NAMESPACE)
        assert forbidden(deleted, verb="delete", resource="resourceclaims"), deleted.stderr
    finally:
        plane.kubectl("delete", "resourceclaim", name, "-n", NAMESPACE, check=False)


# --- the plugin itself, under that token ------------------------------------------------------


def test_the_plugin_publishes_node_as_npus_under_that_token(
    policy_in_force: Deployment, plugin: RunningPlugin
) -> None:
    slices = wait_for(
        lambda: published(policy_in_force, plugin), timeout=90, what="node A's 8 NPUs published"
    )
    node = kubectl_json(policy_in_force.plane, "get", "node", policy_in_force.node_a)
    for piece in slices:
        assert piece["spec"]["driver"] == DRIVER
        (owner,) = piece["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["uid"]) == (
            "Node",
            policy_in_force.node_a,
            node["metadata"]["uid"],
        )
    assert not node_slices(policy_in_force.plane, policy_in_force.node_b)


def liveness(port: int, service: str) -> int:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        return int(response.status)


def test_the_daemonsets_liveness_probe_finds_the_plugin_serving(plugin: RunningPlugin) -> None:
    service = container(only(manifests(), "DaemonSet"))["livenessProbe"]["grpc"]["service"]
    wait_for(
        lambda: (
            liveness(plugin.healthcheck_port, service) == health_pb2.HealthCheckResponse.SERVING
        ),
        timeout=60,
        what=f"grpc.health.v1 {service!r} to answer SERVING",
    )


def allocated(plane: ControlPlane, name: str) -> dict[str, Any] | None:
    claim = kubectl_json(plane, "get", "resourceclaim", name, "-n", NAMESPACE)
    return claim if claim.get("status", {}).get("allocation") else None


def test_the_plugin_prepares_the_seed_numa_claim_the_scheduler_allocated(
    policy_in_force: Deployment, plugin: RunningPlugin
) -> None:
    plane = policy_in_force.plane
    wait_for(lambda: published(policy_in_force, plugin), timeout=90, what="node A's pool")
    objects = load([EXAMPLES / "numa-claim.yaml"])
    claim_name = only(objects, "ResourceClaim")["metadata"]["name"]
    pod = only(objects, "Pod")
    pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": policy_in_force.node_a}
    for obj in objects:
        plane.kubectl("create", "-f", "-", input=json.dumps(obj))
    claim = wait_for(
        lambda: allocated(plane, claim_name), timeout=90, what=f"{claim_name} to be allocated"
    )
    results = claim["status"]["allocation"]["devices"]["results"]
    assert {(r["pool"], r["device"]) for r in results} == {
        (policy_in_force.node_a, "npu-0"),
        (policy_in_force.node_a, "npu-1"),
    }  # allocationMode All of numaNode == 6: the first pair
    uid = claim["metadata"]["uid"]
    with Kubelet(plugin.registry).register() as dra:
        prepared = dra.prepare([WireClaim(NAMESPACE, claim_name, uid)]).claims[uid]
        assert prepared.error == "", f"{prepared.error}\n{plugin.tail()}"
        assert sorted(d.device_name for d in prepared.devices) == ["npu-0", "npu-1"]
        specs = [p for p in plugin.cdi.iterdir() if uid in p.name]
        assert len(specs) == 1, list(plugin.cdi.iterdir())
        assert "/dev/davinci0" in specs[0].read_text()
        assert "/dev/davinci1" in specs[0].read_text()
        unprepared = dra.unprepare([WireClaim(NAMESPACE, claim_name, uid)]).claims[uid]
        assert unprepared.error == ""
        assert not specs[0].exists()


def test_the_plugin_stays_within_its_memory_limit_and_was_refused_nothing(
    policy_in_force: Deployment, plugin: RunningPlugin
) -> None:
    wait_for(lambda: published(policy_in_force, plugin), timeout=90, what="node A's pool")
    limit = container(only(manifests(), "DaemonSet"))["resources"]["limits"]["memory"]
    assert limit.endswith("Mi")
    status = Path(f"/proc/{plugin.process.pid}/status").read_text()
    rss_kib = int(
        next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]
    )
    assert rss_kib < int(limit[:-2]) * 1024, f"RSS {rss_kib} KiB over the {limit} limit"
    log = plugin.log.read_text().lower()
    assert "forbidden" not in log, plugin.tail()
    assert "denied" not in log, plugin.tail()


def test_the_plugin_stops_cleanly_on_sigterm(
    policy_in_force: Deployment, plugin: RunningPlugin
) -> None:
    wait_for(lambda: published(policy_in_force, plugin), timeout=90, what="node A's pool")
    os.killpg(plugin.process.pid, signal.SIGTERM)
    assert plugin.process.wait(timeout=PLUGIN_STOP_S) == 0, plugin.tail()
    assert not list(plugin.registry.glob("*.sock"))
