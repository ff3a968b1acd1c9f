"""`simulate --from` against the real kube-scheduler, v1.34.3 and v1.37.2, on a snapshot taken
as a user takes one: `kubectl get nodes,resourceslices,deviceclasses,resourceclaims,
resourceclaimtemplates,pods -A -o yaml` of the shared control plane (so it holds the other tests'
objects too), after the scheduler placed some pods and left others pending. Slices come from two
drivers: npu-dra's (published as npu-dra publishes them) and a second driver's, written as its
own plugin would.

simulate must leave pending what the scheduler left pending, with the scheduler's reason (and
--explain's groups must add up to the scheduler's counts); then, with a node added (a what-if on
top of the snapshot, and the same node really added), it must place the pending pod where the
scheduler places it, on the same devices.
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
from tests.support.controlplane import ControlPlane, issue_client_certificate, kubeconfig_text
from tests.support.k8s_fixtures import plane_for, versions_params

SNAPSHOT_KINDS = "nodes,resourceslices,deviceclasses,resourceclaims,resourceclaimtemplates,pods"


def _simulate(*args: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["simulate", "--no-prepare", "-o", "json", *args])
    assert code == 0, err.getvalue()
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def _npu_node(name: str, npus: int) -> str:
    return (
        f"kind: SimulatedNode\nmetadata: {{name: {name}}}\n"
        f"spec: {{hardware: {{chip: 910B4, count: {npus}}}}}\n"
    )


def _published(tmp_path: Path, node: str, npus: int, driver: str) -> dict[str, Any]:
    """The slice npu-dra publishes for a node of `npus` NPUs under `driver`."""
    scenario = tmp_path / f"{node}.yaml"
    scenario.write_text(_npu_node(node, npus))
    [found] = _simulate("--scenario", str(scenario), "--driver-name", driver)["resourceSlices"]
    return {**found, "metadata": {"name": found["metadata"]["name"]}}


def _gpu_slice(node: str, driver: str, gpus: int) -> dict[str, Any]:
    """A second driver's slice, as the example DRA driver publishes its GPUs."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {"model": {"string": "LATEST-GPU-MODEL"}, "index": {"int": i}},
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(gpus)
            ],
        },
    }


def _objects(namespace: str, npu: str, gpu: str) -> list[dict[str, Any]]:
    classes = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": driver},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
        }
        for driver in (npu, gpu)
    ]
    templates = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": f"{what}-{count}", "namespace": namespace},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": what, "exactly": {"deviceClassName": driver, "count": count}}
                        ]
                    }
                }
            },
        }
        for what, driver, count in (
            ("npu", npu, 2),
            ("npu", npu, 3),
            ("gpu", gpu, 1),
            ("gpu", gpu, 2),
        )
    ]
    return [*classes, *templates]


def _pod(namespace: str, name: str, template: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": template}],
            "containers": [
                {"name": "app", "image": "busybox", "resources": {"claims": [{"name": "dev"}]}}
            ],
        },
    }


def _decided(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    """The pod once bound or reported unschedulable."""
    core = client.CoreV1Api(plane.api_client)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pod = plane.as_json(core.read_namespaced_pod(name, namespace))
        if pod["spec"].get("nodeName") or _unschedulable(pod):
            return pod
        time.sleep(0.3)
    raise AssertionError(f"pod {namespace}/{name} was neither bound nor reported unschedulable")


def _unschedulable(pod: dict[str, Any]) -> str | None:
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return str(condition.get("message", ""))
    return None


def _devices(plane: ControlPlane, pod: dict[str, Any]) -> list[str]:
    namespace = pod["metadata"]["namespace"]
    [status] = pod["status"]["resourceClaimStatuses"]
    claim = plane.kubectl(
        "get", "resourceclaim", "-n", namespace, status["resourceClaimName"], "-o", "json"
    )
    results = json.loads(claim.stdout)["status"]["allocation"]["devices"]["results"]
    return sorted(r["device"] for r in results)


def _first_sentence(message: str) -> str:
    """The scheduler's first sentence, '0/N nodes are available: ...', without what follows
    ('still not schedulable, preemption: ...')."""
    return message.split(". ")[0].rstrip(".") + "."


def _scheduler_counts(message: str) -> dict[str, int]:
    """'0/16 nodes are available: 1 node(s) had untolerated taint(s), 15 cannot ...' as
    {reason: nodes}."""
    listed = _first_sentence(message).rstrip(".").split(": ", 1)[1]
    counts = {}
    for part in listed.split(", "):
        count, _, reason = part.partition(" ")
        counts[reason] = int(count)
    return counts


def _explained_counts(explain: list[dict[str, Any]]) -> dict[str, int]:
    """--explain's groups in the scheduler's categories: a node filter, else DRA's Filter."""
    counts: dict[str, int] = {}
    for group in explain:
        if group["reason"].startswith("taint "):
            reason = "node(s) had untolerated taint(s)"
        elif "nodeSelector" in group["reason"]:
            reason = "node(s) didn't match Pod's node affinity/selector"
        else:
            reason = "cannot allocate all claims"
        counts[reason] = counts.get(reason, 0) + len(group["nodes"])
    return counts


def _wanted(document: dict[str, Any], pod: str) -> dict[str, Any]:
    [found] = [p for p in document["pods"] if p["pod"] == pod]
    return dict(found)


@pytest.mark.parametrize("version", versions_params())
def test_simulate_from_a_snapshot_decides_as_the_scheduler(
    version: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    plane, prefix = plane_for(request, version), f"s{uuid.uuid4().hex[:6]}"
    namespace, npu, gpu = prefix, f"{prefix}.npu.example", f"{prefix}.gpu.example"
    n1, n2, n3 = (f"{prefix}-n{i}" for i in (1, 2, 3))
    plane.create_namespace(namespace)
    for node in (n1, n2):
        plane.create_ready_node(node)
    slices = [_published(tmp_path, n1, 4, npu), _gpu_slice(n2, gpu, 2)]
    for obj in (*slices, *_objects(namespace, npu, gpu)):
        plane.kubectl("create", "-f", "-", input=json.dumps(obj))
    real = {}
    for name, template in (("a", "npu-2"), ("b", "npu-3"), ("c", "gpu-1"), ("d", "gpu-2")):
        plane.kubectl("create", "-f", "-", input=json.dumps(_pod(namespace, name, template)))
        real[name] = _decided(plane, namespace, name)
    assert [bool(real[n]["spec"].get("nodeName")) for n in "abcd"] == [True, False, True, False]

    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(plane.kubectl("get", SNAPSHOT_KINDS, "-A", "-o", "yaml").stdout)
    assert yaml.safe_load(snapshot.read_text())["kind"] == "List"
    decided_as = ("--kubernetes-version", ".".join(version.removeprefix("v").split(".")[:2]))
    simulated = _simulate("--from", str(snapshot), "--explain", *decided_as)
    # The same cluster read live (--from-cluster): the same objects, the same decisions.
    live = _simulate(
        "--from-cluster", "--kubeconfig", str(plane.kubeconfig), "--explain", *decided_as
    )
    ours = [p for p in simulated["pods"] if p["pod"].startswith(f"{namespace}/")]
    assert [p["pod"] for p in ours] == [f"{namespace}/b", f"{namespace}/d"]  # the pending
    assert [p for p in live["pods"] if p["pod"].startswith(f"{namespace}/")] == ours
    for name in "bd":  # pending in both, for the scheduler's reason
        want = _wanted(simulated, f"{namespace}/{name}")
        message = _unschedulable(real[name])
        assert want["node"] is None, want
        assert message is not None
        assert want["reason"] == _first_sentence(message), (want["reason"], message)
        assert _explained_counts(want["explain"]) == _scheduler_counts(message), want["explain"]

    # Room made: a third NPU node, as a what-if and then for real.
    overlay = tmp_path / "more.yaml"
    overlay.write_text(_npu_node(n3, 4))
    what_if = _simulate(
        "--from", str(snapshot), "--scenario", str(overlay), "--driver-name", npu, *decided_as
    )
    want = _wanted(what_if, f"{namespace}/b")
    assert want["node"] == n3, want
    plane.create_ready_node(n3)
    plane.kubectl("create", "-f", "-", input=json.dumps(_published(tmp_path, n3, 4, npu)))
    deadline = time.monotonic() + 60
    while not (placed := _decided(plane, namespace, "b"))["spec"].get("nodeName"):
        assert time.monotonic() < deadline, "the scheduler did not place b on the new node"
        time.sleep(0.5)
    assert placed["spec"]["nodeName"] == n3
    assert _devices(plane, placed) == sorted(
        d["device"] for ds in want["claims"].values() for d in ds
    )
    assert _wanted(what_if, f"{namespace}/d")["node"] is None  # 2 GPUs: still one free


@pytest.mark.parametrize("version", versions_params()[:1])
def test_simulate_from_a_cluster_that_forbids_the_read_names_the_flag(
    version: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Credentials without RBAC (a user no role names) are refused by a real API server: the
    run stops naming --from-cluster, the kind it could not list and the flag to fix."""
    plane = plane_for(request, version)
    cert, key = issue_client_certificate(plane.pki, tmp_path, "nobody", "/CN=nobody")
    kubeconfig = tmp_path / "nobody.kubeconfig"
    user = {"client-certificate": str(cert), "client-key": str(key)}
    kubeconfig.write_text(kubeconfig_text(plane.server, plane.pki.ca_cert, "nobody", user))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["simulate", "--from-cluster", "--kubeconfig", str(kubeconfig)])
    assert code == 1, err.getvalue()
    assert f"--from-cluster: {plane.server} forbids listing Namespace objects" in err.getvalue()
    assert "credentials of --kubeconfig" in err.getvalue()
