"""Differential test: each scenario in simulate_scenarios/ runs through `npu-dra simulate` and
through a real kube-scheduler, on three planes, simulate told which (`--kubernetes-version`,
`--feature-gates`): v1.34.3 with default gates (DRAPrioritizedList and DRAAdminAccess on,
DRADeviceTaints, DRAPartitionableDevices and DRAConsumableCapacity off), v1.34.3 with the gates
vNPUs and extended resources need (the scenarios in simulate_scenarios_gated/ too), and v1.37.2,
the current release, with its default gates (both folders). v1.36.3 is not run: on all 22
scenarios its scheduler decided as simulate told 1.37 (docs/kubernetes-versions.md), and a third
build would cost the cold `make test` about 8 minutes of its 45.
The same ResourceSlices (simulate's, published through the API), classes, claims and pods go to
both; pods are created one at a time in file order, each waited for until the scheduler bound it
or reported it unschedulable/gated. A pod the scheduler refused for pod affinity and simulate
placed (on its retry, once a later pod it selects was bound) is compared after the last pod, once
the scheduler has tried it again.

An object simulate refuses (exit status 4, listed under `refused`) must be refused by the API
server too, and is left out of both; the rest are created as usual.

Compared per pod: placed or pending; the node where simulate says exactly one node fit; the
devices (sorted) where the node is the same: simulate's choice or, where the node has several
slices (the scheduler walks them in random order), one of the other choices it lists. Once the
scheduler chose another node or other devices than simulate's first choice, the two clusters
hold different states and only placed/pending is compared.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from npu_dra.app.cli import main
from tests.support.controlplane import ControlPlane
from tests.support.gated_plane import GATES

SCENARIOS = sorted((Path(__file__).parent / "simulate_scenarios").glob("*.yaml"))
GATED_SCENARIOS = sorted((Path(__file__).parent / "simulate_scenarios_gated").glob("*.yaml"))


@pytest.fixture
def gated_plane(control_plane_gated: ControlPlane) -> ControlPlane:
    return control_plane_gated


V134 = ("--kubernetes-version", "1.34")
V134_GATED = (*V134, "--feature-gates", ",".join(f"{g}={str(v).lower()}" for g, v in GATES.items()))
V137 = ("--kubernetes-version", "1.37")


def _simulate(
    text: str, tmp_path: Path, driver: str, decided_as: tuple[str, ...]
) -> dict[str, Any]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    args = ["simulate", "--scenario", str(path), "--driver-name", driver, "-o", "json"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, *decided_as])
    document: dict[str, Any] = json.loads(out.getvalue())
    assert code == (4 if document["refused"] else 0), err.getvalue()
    return document


def _key(doc: dict[str, Any]) -> tuple[str, str, str]:
    meta = doc["metadata"]
    return doc["kind"], meta.get("namespace") or "", meta["name"]


def _api_object(doc: dict[str, Any]) -> dict[str, Any]:
    versions = {
        "Namespace": "v1",
        "Pod": "v1",
        "DeviceClass": "resource.k8s.io/v1",
        "ResourceClaim": "resource.k8s.io/v1",
        "ResourceClaimTemplate": "resource.k8s.io/v1",
    }
    return {**doc, "apiVersion": versions[doc["kind"]]}


def _decided(plane: ControlPlane, namespace: str, name: str, *, placed: bool) -> dict[str, Any]:
    """The pod once bound or reported unschedulable. A pod simulate leaves unplaced may also
    never be tried (PreEnqueue keeps a pod whose claim is missing out of the queue, with no
    condition): after a shorter wait it counts as pending."""
    core = client.CoreV1Api(plane.api_client)
    deadline = time.monotonic() + (60 if placed else 15)
    while True:
        pod = plane.as_json(core.read_namespaced_pod(name, namespace))
        if pod["spec"].get("nodeName"):
            return pod
        for condition in pod.get("status", {}).get("conditions") or []:
            if condition["type"] == "PodScheduled" and condition["status"] == "False":
                return pod
        if time.monotonic() > deadline:
            if not placed:
                return pod
            pytest.fail(f"pod {namespace}/{name} was neither bound nor reported unschedulable")
        time.sleep(0.3)


def _waits_for_affinity(pod: dict[str, Any]) -> bool:
    """Reported unschedulable by InterPodAffinity: the scheduler tries it again once a pod its
    affinity selects is bound (simulate, after the pass)."""
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return "didn't match pod affinity rules" in condition.get("message", "")
    return False


def _bound(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    """The pod once bound; as it is after 60 s (its retry waits out a backoff) if never."""
    core = client.CoreV1Api(plane.api_client)
    deadline = time.monotonic() + 60
    while True:
        pod = plane.as_json(core.read_namespaced_pod(name, namespace))
        if pod["spec"].get("nodeName") or time.monotonic() > deadline:
            return pod
        time.sleep(0.3)


def _devices(plane: ControlPlane, pod: dict[str, Any]) -> list[str]:
    namespace = pod["metadata"]["namespace"]
    statuses = pod.get("status", {}).get("resourceClaimStatuses") or []
    names = {s.get("resourceClaimName") for s in statuses}
    names |= {c.get("resourceClaimName") for c in pod["spec"].get("resourceClaims") or []}
    extended = pod.get("status", {}).get("extendedResourceClaimStatus") or {}
    names.add(extended.get("resourceClaimName"))
    found = []
    for name in sorted(n for n in names if n):
        claim = plane.kubectl("get", "resourceclaim", "-n", namespace, name, "-o", "json")
        allocation = (json.loads(claim.stdout).get("status") or {}).get("allocation") or {}
        found += [r["device"] for r in allocation.get("devices", {}).get("results", [])]
    return sorted(found)


def _set_up(plane: ControlPlane, docs: list[dict[str, Any]], slices: list[Any]) -> None:
    namespaces = {d["metadata"]["namespace"] for d in docs if d["metadata"].get("namespace")}
    for namespace in sorted(namespaces):
        plane.create_namespace(namespace)
    for doc in docs:
        if doc["kind"] == "Namespace":
            pairs = [f"{k}={v}" for k, v in (doc["metadata"].get("labels") or {}).items()]
            plane.kubectl("label", "namespace", doc["metadata"]["name"], *pairs)
        if doc["kind"] == "SimulatedNode":
            spec = doc.get("spec") or {}
            taints = [client.V1Taint(**t) for t in spec.get("taints") or []]
            labels = doc["metadata"].get("labels") or {}
            allocatable = {k: str(v) for k, v in (spec.get("allocatable") or {}).items()}
            plane.create_ready_node(
                doc["metadata"]["name"], labels, allocatable=allocatable, taints=taints
            )
    for s in slices:
        body = {**s, "metadata": {"name": s["metadata"]["name"]}}  # no owner: a fresh Node
        plane.kubectl("create", "-f", "-", input=json.dumps(body))


def _agrees(
    plane: ControlPlane, want: dict[str, Any], real: dict[str, Any], *, diverged: bool
) -> tuple[bool, bool]:
    """(does the scheduler's decision agree with simulate's, do the two clusters still hold the
    same state afterwards)."""
    node = real["spec"].get("nodeName")
    if (node is None) != (want["node"] is None):
        return False, False
    if node is None:
        return True, True
    if want["nodesThatFit"] == 1 and node != want["node"] and not diverged:
        return False, False
    if node != want["node"] or diverged:
        return True, False  # several nodes fit: the scheduler's choice among them is by score
    devices = _devices(plane, real)
    if devices == sorted(d["device"] for ds in want["claims"].values() for d in ds):
        return True, True
    # The scheduler walks the node's slices in random order: any choice simulate lists agrees.
    others = [sorted(d for ds in choice.values() for d in ds) for choice in want["otherChoices"]]
    if devices in others:
        print(f"{want['pod']}: the scheduler took another choice simulate listed: {devices}")
    return devices in others, False


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_simulate_decides_as_kube_scheduler(
    scenario: Path, control_plane: ControlPlane, tmp_path: Path
) -> None:
    _compare(scenario, control_plane, tmp_path, V134, "v1.34.3")


@pytest.mark.parametrize("scenario", SCENARIOS + GATED_SCENARIOS, ids=lambda p: p.stem)
def test_simulate_decides_as_kube_scheduler_with_vnpus_and_extended_resources(
    scenario: Path, gated_plane: ControlPlane, tmp_path: Path
) -> None:
    _compare(scenario, gated_plane, tmp_path, V134_GATED, "v1.34.3")


@pytest.mark.k8s_version("v1.37.2")
@pytest.mark.parametrize("scenario", SCENARIOS + GATED_SCENARIOS, ids=lambda p: p.stem)
def test_simulate_decides_as_kube_scheduler_v137(
    scenario: Path, control_plane_v137: ControlPlane, tmp_path: Path
) -> None:
    _compare(scenario, control_plane_v137, tmp_path, V137, "v1.37.2")


def _compare(
    scenario: Path,
    control_plane: ControlPlane,
    tmp_path: Path,
    decided_as: tuple[str, ...],
    version: str,
) -> None:
    prefix = f"d{uuid.uuid4().hex[:6]}"
    text = scenario.read_text().replace("ID", prefix)
    simulated = _simulate(text, tmp_path, f"{prefix}.npu.example", decided_as)
    assert simulated["decidedAs"]["kubernetesVersion"] == version
    docs = [d for d in yaml.safe_load_all(text) if d]
    refused = {(r["kind"], r["namespace"], r["name"]) for r in simulated["refused"]}
    _set_up(control_plane, [d for d in docs if _key(d) not in refused], simulated["resourceSlices"])
    expected = {p["pod"]: p for p in simulated["pods"]}
    agree, disagreements, diverged = 0, [], False
    retried: list[tuple[str, str]] = []  # refused for pod affinity, to be tried again
    for doc in docs:
        if doc["kind"] in ("SimulatedNode", "Namespace"):
            continue
        body = json.dumps(_api_object(doc))
        created = control_plane.kubectl("create", "-f", "-", input=body, check=False)
        if _key(doc) in refused:
            assert created.returncode != 0, f"the API server accepted {_key(doc)}"
            continue
        assert created.returncode == 0, created.stderr
        if doc["kind"] != "Pod":
            continue
        namespace, name = doc["metadata"]["namespace"], doc["metadata"]["name"]
        want = expected[f"{namespace}/{name}"]
        real = _decided(control_plane, namespace, name, placed=want["node"] is not None)
        if want["node"] is not None and _waits_for_affinity(real):
            retried.append((namespace, name))  # simulate placed it on its retry: compare then
            continue
        agrees, same_state = _agrees(control_plane, want, real, diverged=diverged)
        if agrees:
            agree += 1
        else:
            disagreements.append((name, want["status"], want["node"], real["spec"].get("nodeName")))
        diverged = diverged or not same_state
    for namespace, name in retried:
        want = expected[f"{namespace}/{name}"]
        real = _bound(control_plane, namespace, name)
        agrees, same_state = _agrees(control_plane, want, real, diverged=diverged)
        if agrees:
            agree += 1
        else:
            disagreements.append((name, want["status"], want["node"], real["spec"].get("nodeName")))
        diverged = diverged or not same_state
    print(f"{scenario.stem}: {agree}/{len(expected)} pods agree")
    assert not disagreements, disagreements
