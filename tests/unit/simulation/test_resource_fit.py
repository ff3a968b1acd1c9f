"""NodeResourcesFit's filter: a pod's cpu, memory and ephemeral storage against the node's
allocatable less what its pods request, and one pod more against its pod count, worded as
kube-scheduler's FitError words them; the requests as the API server defaults them; the
allocatable of a SimulatedNode (`spec.allocatable`) and of a snapshot's Node."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npu_dra.domain.scheduling.resources import DEFAULT_ALLOCATABLE, GIB, Allocatable, Resources
from tests.unit.simulation.test_node_scores import CLASS, node
from tests.unit.simulation.test_simulate_default import simulate


def pod(name: str, resources: str = "{}", spec: str = "") -> str:
    return (
        f"kind: Pod\nmetadata: {{name: {name}, namespace: t}}\nspec:\n{spec}"
        "  resourceClaims: [{name: npu, resourceClaimTemplateName: one}]\n"
        f"  containers: [{{name: app, image: busybox, resources: {resources}}}]\n"
    )


def run(tmp_path: Path, *documents: str, args: tuple[str, ...] = ()) -> dict[str, Any]:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([CLASS, *documents]))
    code, out, err = simulate("--scenario", str(path), "-o", "json", "--no-prepare", *args)
    assert code in (0, 4), err
    document: dict[str, Any] = json.loads(out)
    return document


def decided(document: dict[str, Any]) -> dict[str, tuple[str | None, str | None]]:
    return {p["pod"]: (p["node"], p["reason"]) for p in document["pods"]}


def test_a_pod_goes_only_where_its_cpu_fits_and_counts_there(tmp_path: Path) -> None:
    small = node("a", "  allocatable: {cpu: '4'}\n")
    pods = decided(
        run(
            tmp_path,
            small,
            node("b"),
            pod("six", "{requests: {cpu: '6'}}"),
            pod("three", "{limits: {cpu: '3'}}"),  # requests default to the limits
            pod("six-again", "{requests: {cpu: '6'}}"),
        )
    )
    assert pods["t/six"] == ("b", None)
    # a: idle, 4 cpus; b: 2 of 8 left: only a fits 3
    assert pods["t/three"] == ("a", None)
    assert pods["t/six-again"] == (None, "0/2 nodes are available: 2 Insufficient cpu.")


def test_every_resource_short_is_a_reason_and_the_pod_count_first(tmp_path: Path) -> None:
    tiny = node("a", "  allocatable: {pods: '1', memory: 1Gi}\n")
    pods = decided(
        run(
            tmp_path,
            tiny,
            pod("first"),
            pod("big", "{requests: {cpu: '9', memory: 2Gi, ephemeral-storage: 1Gi}}"),
        )
    )
    assert pods["t/first"] == ("a", None)
    # Reasons sorted as strings, each node counted once per reason; the simulated node has no
    # ephemeral storage unless given (the differential test's real nodes have none either).
    assert pods["t/big"] == (
        None,
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient ephemeral-storage, "
        "1 Insufficient memory, 1 Too many pods.",
    )


def test_filters_before_fit_give_the_only_reason(tmp_path: Path) -> None:
    east = node("a", "  allocatable: {cpu: '1'}\n", labels="{zone: east}")
    pods = decided(
        run(tmp_path, east, pod("west", "{requests: {cpu: '2'}}", "  nodeSelector: {zone: west}\n"))
    )
    assert pods["t/west"][1] == (
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
    )


def test_nodes_of_one_class_split_by_allocatable(tmp_path: Path) -> None:
    """Three nodes alike but for a's cpus: a pod asking 6 may take b or c, not a."""
    document = run(
        tmp_path,
        node("a", "  allocatable: {cpu: '4'}\n"),
        node("b"),
        node("c"),
        pod("six", "{requests: {cpu: '6'}}"),
    )
    (six,) = document["pods"]
    assert (six["node"], six["nodesThatFit"]) == ("b", 2)


def test_init_containers_count_their_largest_request(tmp_path: Path) -> None:
    init = "  initContainers: [{name: w, image: busybox, resources: {requests: {cpu: '5'}}}]\n"
    small = node("a", "  allocatable: {cpu: '4'}\n")
    pods = decided(run(tmp_path, small, pod("warm", "{requests: {cpu: '1'}}", init)))
    assert pods["t/warm"] == (None, "0/1 nodes are available: 1 Insufficient cpu.")


def test_explain_gives_the_numbers(tmp_path: Path) -> None:
    small = node("a", "  allocatable: {cpu: 1500m}\n")
    document = run(tmp_path, small, pod("p", "{requests: {cpu: '2'}}"), args=("--explain",))
    (explained,) = document["pods"][0]["explain"]
    assert explained["reason"] == (
        "the node's resources: the pod requests 2 cpu, 1500m of 1500m free"
    )


@pytest.mark.parametrize(
    ("document", "field", "complaint"),
    [
        (pod("p", "{requests: {cpu: '2'}, limits: {cpu: '1'}}"), "requests.cpu", "limit of 1"),
        (pod("p", "{requests: {cpu: '-1'}}"), "requests.cpu", "greater than or equal to 0"),
        (pod("p", "{requests: {cpu: lots}}"), "requests.cpu", "not a Kubernetes quantity"),
        (node("n", "  allocatable: {hugepages-2Mi: 1Gi}\n"), "allocatable", "simulate models"),
    ],
)
def test_resources_the_api_server_refuses_are_refused(
    tmp_path: Path, document: str, field: str, complaint: str
) -> None:
    (refused,) = run(tmp_path, node("a"), document)["refused"]
    assert field in refused["field"]
    assert complaint in refused["reason"]


SNAPSHOT = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2}
  status: {allocatable: {cpu: '8', memory: 8Gi, pods: '2'}}
- apiVersion: v1
  kind: Pod
  metadata: {name: running, namespace: t}
  spec:
    nodeName: n1
    containers: [{name: app, image: busybox, resources: {requests: {cpu: '3'}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: also-running, namespace: t}
  spec:
    nodeName: n2
    containers: [{name: app, image: busybox}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: pending-1, namespace: t, creationTimestamp: '2026-01-01T00:00:01Z'}
  spec:
    containers: [{name: app, image: busybox, resources: {requests: {cpu: '2'}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: pending-2, namespace: t, creationTimestamp: '2026-01-01T00:00:02Z'}
  spec:
    containers: [{name: app, image: busybox, resources: {requests: {cpu: '2'}}}]
"""


def test_a_snapshot_counts_bound_pods_against_the_nodes_allocatable(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(SNAPSHOT)
    code, out, err = simulate("--from", str(path), "-o", "json", "--no-prepare")
    assert code == 0, err
    pods = {p["pod"]: (p["node"], p["reason"]) for p in json.loads(out)["pods"]}
    # n1 has 1 cpu left of 4 (a running pod requests 3); n2 holds 1 pod of 2
    assert pods["t/pending-1"] == ("n2", None)
    assert pods["t/pending-2"] == (
        None,
        "0/2 nodes are available: 1 Insufficient cpu, 1 Too many pods.",
    )


def test_a_simulated_node_gets_what_the_differential_tests_real_node_gets() -> None:
    """tests/support/controlplane.py `create_ready_node` sets the real twin's allocatable; an
    empty `spec.allocatable` must mean the same here."""
    source = (Path(__file__).parents[2] / "support" / "controlplane.py").read_text()
    assert '{"cpu": "8", "memory": "32Gi", "pods": "110", **(allocatable or {})}' in source
    assert Allocatable(Resources(8000, 32 * GIB), 110) == DEFAULT_ALLOCATABLE
