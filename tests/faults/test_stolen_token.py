"""The plugin's token stolen from node A and used by hand, against the real API server with
deploy/manifests' admission policies applied (tests/faults/conftest.py).

The scheduler keys allocations by (driver, pool, device), so a slice on node A in a pool named
after node B, carrying B's device names, makes it hand B's free NPUs to pods on A: the token may
publish only the pool named after its own node. Events: only on its own Node (in `default`, as
the kubelet's) and on a ResourceClaim in the claim's own namespace, as the driver's controller,
never in kube-system posing as the kubelet. The plugin itself, under the same token, still
publishes its pool and records its own events, and a slice planted on its node in another pool
(e.g. by an admin before the policy pinned pools) is deleted, not updated into its own.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client

from npu_dra.adapters.kube_shapes.events import CONTROLLER, event_to_api
from npu_dra.domain.events import ClusterEvent, EventType, Regarding
from tests.deploy.objects import manifests
from tests.e2e.plugin_process import DRIVER
from tests.faults.harness import FaultNode, PluginRun, create_claims, fault_node, unique
from tests.support.controlplane import ControlPlane, wait_for

POLICY_LOAD_S = 60.0  # the API server loads new policies asynchronously (about a second)
PUBLISH_S = 60.0
PLANTED_S = 30.0  # a publish takes a second or two
EVENT_S = 60.0  # the plugin sends events from a queue, best effort


@dataclass
class Stolen:
    node: FaultNode  # node A: the token is bound to its plugin's pod
    other: str  # node B

    def as_token(self, *args: str, body: dict[str, Any] | None = None) -> Any:
        stdin = json.dumps(body) if body is not None else None
        return self.node.plane.kubectl(
            *args, check=False, input=stdin, kubeconfig=self.node.kubeconfig
        )

    def as_admin(self, *args: str, body: dict[str, Any] | None = None) -> Any:
        stdin = json.dumps(body) if body is not None else None
        return self.node.plane.kubectl(*args, check=False, input=stdin)


def refused(result: Any, *, says: str) -> bool:
    return (
        result.returncode != 0
        and "ValidatingAdmissionPolicy" in result.stderr
        and says in result.stderr
    )


def shipped_policy_for(resource: str) -> bool:
    return any(
        resource in rule["resources"]
        for policy in manifests()
        if policy["kind"] == "ValidatingAdmissionPolicy"
        for rule in policy["spec"]["matchConstraints"]["resourceRules"]
    )


@pytest.fixture(scope="module")
def stolen(access: ControlPlane) -> Iterator[Stolen]:
    """Node A (its token, through the toxic proxy) and node B, once the shipped policies are in
    force (a dry run each policy denies: nothing is stored)."""
    other = unique("stolen-b")
    access.create_ready_node(other)
    try:
        with fault_node(access, "stolen-a") as node:
            theft = Stolen(node, other)
            node_b = forged_slice(node.name, pool=other)
            node_b["spec"]["nodeName"] = other
            waits = [("resourceslices", node_b, f"node '{other}'")]
            if shipped_policy_for("events"):
                waits.append(("events", pod_event_in_kube_system(node.name), "kube-system"))
            for resource, body, says in waits:
                wait_denied(theft, resource, body, says)
            yield theft
    finally:
        access.kubectl("delete", "node", other, "--ignore-not-found", check=False)


def wait_denied(theft: Stolen, resource: str, body: dict[str, Any], says: str) -> None:
    def denied() -> bool:
        dry_run = theft.as_token("create", "--dry-run=server", "-f", "-", body=body)
        return refused(dry_run, says=says)

    wait_for(denied, timeout=POLICY_LOAD_S, what=f"the policy on {resource} to deny the token")


def forged_slice(node: str, *, pool: str, devices: int = 2) -> dict[str, Any]:
    """A slice of the plugin's driver on `node` in pool `pool`, with the plugin's device names."""
    name = unique(f"forged-{pool}")[:63]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"npu-{n}"} for n in range(devices)],
        },
    }


# --- #3: the pool is pinned to the token's node ------------------------------------------------


def test_the_token_may_not_publish_another_nodes_pool_on_its_own_node(stolen: Stolen) -> None:
    forged = forged_slice(stolen.node.name, pool=stolen.other)
    created = stolen.as_token("create", "-f", "-", body=forged)
    if created.returncode == 0:
        stolen.as_admin("delete", "resourceslice", forged["metadata"]["name"])
    assert refused(created, says=f"not pool '{stolen.other}'"), created.stderr or created.stdout
    assert f"only the pool named after its node '{stolen.node.name}'" in created.stderr


def test_the_start_up_probes_dry_run_in_a_pool_of_its_own_is_still_allowed(
    stolen: Stolen,
) -> None:
    # adapters/cluster/kube/partitionable_probe.py: dryRun=All, pool "<node>-probe"; nothing is
    # stored, so the pool rule does not apply to dry runs (the node and driver rules do).
    probe = forged_slice(stolen.node.name, pool=f"{stolen.node.name}-probe")
    dry = stolen.as_token("create", "--dry-run=server", "-f", "-", body=probe)
    assert dry.returncode == 0, dry.stderr
    stored = stolen.as_token("create", "-f", "-", body=probe)
    if stored.returncode == 0:
        stolen.as_admin("delete", "resourceslice", probe["metadata"]["name"])
    assert refused(stored, says=f"not pool '{stolen.node.name}-probe'"), stored.stderr


def test_the_plugin_publishes_its_pool_under_the_policy(stolen: Stolen) -> None:
    node = stolen.node
    run = node.start()
    wait_for(lambda: whole_pool(node, run), timeout=PUBLISH_S, what=f"{node.name}'s pool",
             fatal=(AssertionError,))  # fmt: skip
    assert "denied request" not in run.log(400).lower(), run.log()


def test_the_plugin_replaces_a_slice_planted_on_its_node_in_another_pool(stolen: Stolen) -> None:
    node = stolen.node
    if node.plugin is not None:
        node.plugin.stop()
    planted = forged_slice(node.name, pool=stolen.other)  # by someone allowed to: the admin
    created = stolen.as_admin("create", "-f", "-", body=planted)
    assert created.returncode == 0, created.stderr
    try:
        run = node.start()
        wait_for(lambda: whole_pool(node, run), timeout=PLANTED_S, what=f"{node.name}'s pool",
                 fatal=(AssertionError,))  # fmt: skip
    finally:
        stolen.as_admin("delete", "resourceslice", planted["metadata"]["name"])


def whole_pool(node: FaultNode, run: PluginRun) -> list[dict[str, Any]]:
    """The node's slices once they are its 8 NPUs in the pool named after it, else []."""
    assert run.running(), run.log()
    slices = node.slices()
    pools = {s["spec"]["pool"]["name"] for s in slices}
    devices = sum(len(s["spec"].get("devices", [])) for s in slices)
    return slices if pools == {node.name} and devices == 8 else []


# --- #7: Events only on its own Node and on claims in their namespace ----------------------------


def plugin_event(regarding: Regarding, reason: str = "DeviceUnhealthy") -> dict[str, Any]:
    """An Event exactly as the plugin writes it (adapters/kube_shapes/events.py)."""
    event = ClusterEvent(regarding, reason, "npu-3 (910B4, card 3 chip 0): OK -> Alarm",
                         EventType.WARNING)  # fmt: skip
    now = dt.datetime.now(dt.UTC)
    return event_to_api(event, instance="npu-dra-stolen", now=now, suffix=unique("e"))


def pod_event_in_kube_system(node: str) -> dict[str, Any]:
    """The kubelet's voice: an event on a kube-system Pod, reported by "kubelet"."""
    body = plugin_event(Regarding("Pod", "kube-apiserver-" + node, "kube-system"), "Killing")
    body["reportingController"] = "kubelet"
    return body


def forged_events(stolen: Stolen) -> dict[str, tuple[dict[str, Any], str]]:
    """What a stolen token might try, and what the refusal says."""
    own_node = Regarding("Node", stolen.node.name)
    in_kube_system = plugin_event(own_node)
    in_kube_system["metadata"]["namespace"] = "kube-system"  # allowed by the API for a Node
    as_kubelet = plugin_event(own_node)
    as_kubelet["reportingController"] = "kubelet"
    related = plugin_event(own_node)
    related["related"] = {"apiVersion": "v1", "kind": "Pod", "name": "x", "namespace": "default"}
    elsewhere = plugin_event(
        Regarding("ResourceClaim", "c", "kube-system", api_version="resource.k8s.io/v1")
    )
    elsewhere["metadata"]["namespace"] = stolen.node.namespace
    return {
        "a kube-system pod, as the kubelet": (
            pod_event_in_kube_system(stolen.node.name),
            "not on Pod 'kube-system/kube-apiserver-",
        ),
        "its node, in kube-system": (in_kube_system, "namespace 'kube-system'"),
        "node B": (plugin_event(Regarding("Node", stolen.other)), f"not on Node '{stolen.other}'"),
        "its node, as the kubelet": (
            as_kubelet,
            f"only as reportingController '{CONTROLLER}', not",
        ),
        "its node, related to a pod": (related, "related"),
        "a claim of another namespace": (elsewhere, "not on ResourceClaim 'kube-system/c'"),
    }


@pytest.mark.parametrize(
    "attempt",
    [
        "a kube-system pod, as the kubelet",
        "its node, in kube-system",
        "node B",
        "its node, as the kubelet",
        "its node, related to a pod",
        "a claim of another namespace",
    ],
)
def test_the_token_may_not_record_events_beyond_its_node_and_claims(
    stolen: Stolen, attempt: str
) -> None:
    body, says = forged_events(stolen)[attempt]
    created = stolen.as_token("create", "-f", "-", body=body)
    assert refused(created, says=says), created.stderr or created.stdout


def test_the_plugins_own_node_event_is_recorded(stolen: Stolen) -> None:
    body = plugin_event(Regarding("Node", stolen.node.name))
    created = stolen.as_token("create", "-f", "-", body=body)
    assert created.returncode == 0, created.stderr


def test_the_plugin_records_a_failed_prepare_on_the_claim(stolen: Stolen) -> None:
    node = stolen.node
    (claim,) = create_claims(node, [["npu-99"]], prefix="no-such-npu")  # not on this node
    if node.plugin is None or not node.plugin.running():
        node.start()
    with node.kubelet() as kubelet:
        answer = kubelet.prepare([claim], timeout=30).claims[claim.uid]
    assert "npu-99" in answer.error
    events = client.EventsV1Api(node.plane.api_client)

    def recorded() -> list[Any]:
        found = events.list_namespaced_event(node.namespace).items
        return [e for e in found if e.regarding.name == claim.name]

    (event,) = wait_for(recorded, timeout=EVENT_S, what=f"a PrepareFailed event on {claim.name}")
    assert (event.reason, event.regarding.kind) == ("PrepareFailed", "ResourceClaim")
    assert node.plugin is not None
    assert "not recorded" not in node.plugin.log(400), node.plugin.log()
