"""The e2e control plane works: DRA's API is served, the controller-manager turns
ResourceClaimTemplates into ResourceClaims, the scheduler binds pods to fake ready nodes,
ServiceAccount kubeconfigs carry only their RBAC rights, and nothing outlives a stop."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client import ApiException

from tests.support.controlplane import ControlPlane, api_client_for, pid_alive, wait_for

REPO = Path(__file__).resolve().parents[2]
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"  # never pulled: no kubelet runs


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def namespace(control_plane: ControlPlane) -> Iterator[str]:
    name = control_plane.create_namespace(unique("e2e"))
    yield name
    control_plane.delete_namespace(name)


def test_resource_k8s_io_v1_is_served(control_plane: ControlPlane) -> None:
    groups = control_plane.as_json(client.ApisApi(control_plane.api_client).get_api_versions())
    [resource_group] = [group for group in groups["groups"] if group["name"] == "resource.k8s.io"]
    assert resource_group["preferredVersion"]["version"] == "v1"
    resources = client.ResourceV1Api(control_plane.api_client).get_api_resources()
    names = {resource["name"] for resource in control_plane.as_json(resources)["resources"]}
    assert {"deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"} <= names
    listed = control_plane.kubectl("api-resources", "--api-group=resource.k8s.io", "-o", "name")
    assert "resourceslices.resource.k8s.io" in listed.stdout.split()


def test_claim_template_yields_a_claim_for_the_pod(
    control_plane: ControlPlane, namespace: str
) -> None:
    device_class = unique("e2e-npu")
    manifests = textwrap.dedent(
        f"""\
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {{name: {device_class}}}
        spec:
          selectors:
          - cel: {{expression: 'device.driver == "npu.example.com"'}}
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {{name: one-npu, namespace: {namespace}}}
        spec:
          spec:
            devices:
              requests:
              - name: npu
                exactly: {{deviceClassName: {device_class}}}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {{name: worker, namespace: {namespace}}}
        spec:
          resourceClaims:
          - {{name: npu, resourceClaimTemplateName: one-npu}}
          containers:
          - name: main
            image: {PAUSE_IMAGE}
            resources:
              claims: [{{name: npu}}]
        """
    )
    try:
        control_plane.kubectl("apply", "-f", "-", input=manifests)
        core = client.CoreV1Api(control_plane.api_client)

        def read_pod() -> dict[str, Any]:
            return control_plane.as_json(core.read_namespaced_pod("worker", namespace))

        def generated_claim_name() -> str | None:
            statuses = read_pod()["status"].get("resourceClaimStatuses")
            return str(statuses[0]["resourceClaimName"]) if statuses else None

        claim_name = wait_for(generated_claim_name, timeout=60, what="the pod's generated claim")
        claim = control_plane.as_json(
            client.ResourceV1Api(control_plane.api_client).read_namespaced_resource_claim(
                claim_name, namespace
            )
        )
        assert claim_name.startswith("worker-npu-")
        assert [(ref["kind"], ref["uid"]) for ref in claim["metadata"]["ownerReferences"]] == [
            ("Pod", read_pod()["metadata"]["uid"])
        ]
        assert claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "npu"
        [request] = claim["spec"]["devices"]["requests"]
        assert (request["name"], request["exactly"]["deviceClassName"]) == ("npu", device_class)
    finally:
        control_plane.kubectl("delete", "deviceclass", device_class, "--ignore-not-found")


def test_scheduler_binds_a_pod_to_a_ready_node(control_plane: ControlPlane, namespace: str) -> None:
    pool = unique("pool")
    node_name = f"node-{pool}"
    node = control_plane.as_json(
        control_plane.create_ready_node(node_name, labels={"npu-dra.test/pool": pool})
    )
    conditions = node["status"]["conditions"]
    assert [cond["status"] for cond in conditions if cond["type"] == "Ready"] == ["True"]
    assert node["spec"].get("taints", []) == []
    core = client.CoreV1Api(control_plane.api_client)
    core.create_namespaced_pod(
        namespace,
        client.V1Pod(
            metadata=client.V1ObjectMeta(name="plain"),
            spec=client.V1PodSpec(
                node_selector={"npu-dra.test/pool": pool},
                containers=[client.V1Container(name="main", image=PAUSE_IMAGE)],
            ),
        ),
    )
    bound = wait_for(
        lambda: control_plane.as_json(core.read_namespaced_pod("plain", namespace))["spec"].get(
            "nodeName"
        ),
        timeout=60,
        what="the scheduler to bind the pod",
    )
    assert bound == node_name
    # No controller took the node back out of service meanwhile.
    assert control_plane.as_json(core.read_node(node_name))["spec"].get("taints", []) == []
    core.delete_node(node_name)


def test_service_account_kubeconfig_has_only_its_rbac_rights(
    control_plane: ControlPlane, namespace: str
) -> None:
    kubeconfig = control_plane.service_account_kubeconfig(namespace, "plugin")
    whoami = control_plane.kubectl(
        "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}", kubeconfig=kubeconfig
    )
    assert whoami.stdout == f"system:serviceaccount:{namespace}:plugin"

    def can_i(*args: str) -> str:
        result = control_plane.kubectl("auth", "can-i", *args, check=False, kubeconfig=kubeconfig)
        return result.stdout.strip()

    assert can_i("list", "pods", "-n", namespace) == "no"
    assert can_i("create", "resourceslices.resource.k8s.io") == "no"
    control_plane.kubectl(
        "create", "role", "pod-reader", "-n", namespace, "--verb=list", "--resource=pods"
    )
    control_plane.kubectl(
        "create", "rolebinding", "plugin-reads-pods", "-n", namespace,
        "--role=pod-reader", f"--serviceaccount={namespace}:plugin",
    )  # fmt: skip
    wait_for(lambda: can_i("list", "pods", "-n", namespace) == "yes", timeout=30, what="RBAC")
    with api_client_for(kubeconfig) as api:
        client.CoreV1Api(api).list_namespaced_pod(namespace)
        with pytest.raises(ApiException) as denied:
            client.CoreV1Api(api).list_node()
        assert denied.value.status == 403


def _refuses_connections(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_stop_leaves_no_process_behind(k8s_bin_dir: Path, tmp_path: Path) -> None:
    plane = ControlPlane(k8s_bin_dir, tmp_path)
    try:
        plane.start()
        pids = plane.pids
        assert sorted(pids) == sorted(
            ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]
        )
        assert all(pid_alive(pid) for pid in pids.values())
    finally:
        plane.stop()
    assert {name: pid for name, pid in pids.items() if pid_alive(pid)} == {}
    assert plane.pids == {}
    assert _refuses_connections(plane.ports["kube-apiserver"])
    assert _refuses_connections(plane.ports["etcd"])
    plane.stop()  # a second stop is harmless


def test_a_killed_owner_leaves_no_process_behind(k8s_bin_dir: Path, tmp_path: Path) -> None:
    """The Python process that started a control plane dies by SIGKILL (no atexit, no
    finalizer): the kernel's parent-death signal must still take every component down."""
    pid_file = tmp_path / "pids.json"
    owner_script = textwrap.dedent(
        f"""\
        import json, sys, time
        from pathlib import Path
        sys.path.insert(0, {str(REPO)!r})
        from tests.support.controlplane import ControlPlane
        plane = ControlPlane(Path({str(k8s_bin_dir)!r}), Path({str(tmp_path / "plane")!r}))
        plane.start()
        Path({str(pid_file)!r}).write_text(json.dumps(plane.pids))
        time.sleep(600)
        """
    )
    owner = subprocess.Popen([sys.executable, "-c", owner_script])
    pids: dict[str, int] = {}
    try:

        def started() -> bool:
            if owner.poll() is not None:
                raise AssertionError(f"the owner process exited with {owner.returncode}")
            return pid_file.exists() and bool(pid_file.read_text())

        wait_for(
            started,
            timeout=240,
            what="the owner to start its control plane",
            fatal=(AssertionError,),
        )
        pids = json.loads(pid_file.read_text())
        assert len(pids) == 4
        assert all(pid_alive(pid) for pid in pids.values())
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=30)
        wait_for(
            lambda: not any(pid_alive(pid) for pid in pids.values()),
            timeout=30,
            what=f"the orphaned components {pids} to die",
        )
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        for pid in pids.values():  # leave nothing behind even when the test fails
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
