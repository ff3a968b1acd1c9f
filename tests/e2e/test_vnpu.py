"""vNPUs and extended-resource pods on a real v1.34.3 control plane with
DRAPartitionableDevices and DRAExtendedResource on (and on v1.37.2, where both are on by
default and counter sets sit in slices of their own, once the session offers that plane), and
our plugin's publishing and preparing wired as `npu-dra kubelet-plugin --vnpu=templates`
wires them, over the fake npu-smi.

Pods are scheduled by the real kube-scheduler; with no kubelet here, the test makes the
kubelet's NodePrepareResources call itself (the preparer reads each claim from the API server).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from npu_dra.adapters.cluster.kube.claim_status import KubeClaimStatus
from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.hardware.npu_smi.replay_vnpu import state_of
from npu_dra.app.container import NodeContainer
from npu_dra.app.options import Hardware, defaults
from npu_dra.app.services.claim_status import ClaimStatusWorker
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimName, DriverName, Namespace
from tests.support import k8s_fixtures
from tests.support.controlplane import ControlPlane
from tests.support.fake_npu_smi import FakeNpuSmi, load_scenario, make_dev_root, make_sysfs

# v1.34.3 with DRAPartitionableDevices and DRAExtendedResource on; and v1.37.2 (both on by
# default there) once the session fixtures offer that version's plane (`plane_for`).
PLANES = [pytest.param("v1.34.3", id="v1.34.3-gated")]
_PLANE_FOR = getattr(k8s_fixtures, "plane_for", None)
if _PLANE_FOR is not None:
    PLANES.append(pytest.param("v1.37.2", id="v1.37.2", marks=pytest.mark.k8s_version("v1.37.2")))


@pytest.fixture(scope="module", params=PLANES)
def gated_plane(request: pytest.FixtureRequest) -> ControlPlane:
    if request.param == "v1.34.3" or _PLANE_FOR is None:
        plane = request.getfixturevalue("control_plane_gated")
    else:
        plane = _PLANE_FOR(request, request.param)
    assert isinstance(plane, ControlPlane)
    return plane


class PluginNode:
    """A Ready Node and our plugin's container for it, on npu-smi's 8 x 910B4 with vNPUs."""

    def __init__(self, plane: ControlPlane, tmp_path: Path, *, vnpu: str) -> None:
        self.name = f"n{uuid.uuid4().hex[:6]}"
        self.driver = DriverName(f"{self.name}.npu.example")
        plane.create_ready_node(self.name)
        self.npu_smi = FakeNpuSmi(
            tmp_path / "npu-smi", {**load_scenario("910B4_8npu"), "vnpu": "910B4"}
        )
        dev = make_dev_root(tmp_path / "dev", range(8))
        settings = defaults(
            node_name=self.name,
            driver_name=str(self.driver),
            device_profile="npu",
            hardware=Hardware("npu_smi"),
            npu_smi_path=self.npu_smi.path,
            dev_root=dev,
            sysfs_root=make_sysfs(tmp_path / "sys"),
            cdi_root=tmp_path / "cdi",
            plugins_dir=tmp_path / "plugins",
            vnpu=vnpu,
        )
        self.container = NodeContainer(
            settings=providers.Object(settings), cluster=KubeCluster(plane.api_client)
        )
        (tmp_path / "plugins" / self.driver).mkdir(parents=True)
        self.container.publisher().publish()


def _pod_with_claim(
    plane: ControlPlane, namespace: str, name: str, device_class: str, cel: str
) -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "npu", "exactly": {
            "deviceClassName": device_class, "selectors": [{"cel": {"expression": cel}}]}}]}},
    }  # fmt: skip
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"claims": [{"name": "npu"}]}}
            ],
            "resourceClaims": [{"name": "npu", "resourceClaimName": name}],
        },
    }  # fmt: skip
    for obj in (claim, pod):
        plane.kubectl("create", "-f", "-", input=json.dumps(obj))


def _device_class(plane: ControlPlane, name: str, cel: str, extended: str | None = None) -> None:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": cel}}]}
    if extended:
        spec["extendedResourceName"] = extended
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }
    plane.kubectl("create", "-f", "-", input=json.dumps(body))


def _decided(plane: ControlPlane, namespace: str, name: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        pod: dict[str, Any] = json.loads(
            plane.kubectl("get", "pod", "-n", namespace, name, "-o", "json").stdout
        )
        if pod["spec"].get("nodeName"):
            return pod
        for condition in pod.get("status", {}).get("conditions") or []:
            if condition["type"] == "PodScheduled" and condition["status"] == "False":
                return pod
        assert time.monotonic() < deadline, f"pod {name} neither bound nor refused"
        time.sleep(0.3)


def _claim(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    claim: dict[str, Any] = json.loads(
        plane.kubectl("get", "resourceclaim", "-n", namespace, name, "-o", "json").stdout
    )
    return claim


def _allocated(claim: dict[str, Any]) -> list[str]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return sorted(r["device"] for r in allocation.get("devices", {}).get("results", []))


def test_the_scheduler_shares_one_chip_between_two_vnpu_pods_and_refuses_overruns(
    gated_plane: ControlPlane, tmp_path: Path
) -> None:
    node = PluginNode(gated_plane, tmp_path, vnpu="templates")
    stored = KubeCluster(gated_plane.api_client).list_slices(driver=node.driver)
    sets = sorted(c.name for s in stored for c in s.shared_counters)
    assert sets == sorted(f"npu-{i}-counters" for i in range(8))  # the server kept them
    namespace = gated_plane.create_namespace(f"vnpu-{uuid.uuid4().hex[:6]}")
    device_class = f"{node.name}-npu"
    _device_class(gated_plane, device_class, f'device.driver == "{node.driver}"')
    attr = f'device.attributes["{node.driver}"]'
    on_chip0 = f"{attr}.physicalId == 0"
    vir05 = f'{on_chip0} && "vnpuTemplate" in {attr} && {attr}.vnpuTemplate == "vir05_1c_8g"'
    big = f'{on_chip0} && "vnpuTemplate" in {attr} && {attr}.vnpuTemplate == "vir10_4c_16g_m"'
    whole = f'{on_chip0} && !("vnpuTemplate" in {attr})'

    decided = {}
    for name, cel in (("a", vir05), ("b", vir05), ("c", big), ("d", whole)):
        _pod_with_claim(gated_plane, namespace, name, device_class, cel)
        decided[name] = _decided(gated_plane, namespace, name)

    assert decided["a"]["spec"].get("nodeName") == node.name
    assert decided["b"]["spec"].get("nodeName") == node.name
    a, b = (
        _allocated(_claim(gated_plane, namespace, "a")),
        _allocated(_claim(gated_plane, namespace, "b")),
    )
    assert {*a, *b} == {"npu-0-vir05-1c-8g-0", "npu-0-vir05-1c-8g-1"}
    # vir10_4c_16g_m needs all 9 VPCs and 24 JPEGDs; two vir05 took 4 and 12 of them.
    assert decided["c"]["spec"].get("nodeName") is None
    assert decided["d"]["spec"].get("nodeName") is None  # the whole chip: its counters are taken

    refs = [
        ClaimRef(
            Namespace(namespace), ClaimName(n), _claim(gated_plane, namespace, n)["metadata"]["uid"]
        )
        for n in ("a", "b")
    ]
    outcomes = node.container.preparer().prepare(refs)
    assert [o.error for o in outcomes.values()] == [None, None]
    vnpus = state_of(node.npu_smi.directory)["0/0"]
    assert sorted((v["id"], v["template"]) for v in vnpus) == [
        (100, "vir05_1c_8g"),
        (101, "vir05_1c_8g"),
    ]
    specs = sorted((tmp_path / "cdi").glob("*.json"))
    host_paths = {
        n.get("hostPath")
        for p in specs
        for d in json.loads(p.read_text())["devices"]
        for n in d["containerEdits"]["deviceNodes"]
    }
    assert host_paths == {f"{tmp_path}/dev/vdavinci100", f"{tmp_path}/dev/vdavinci101"}

    # Claim status (KEP-4817): each claim's entry names the vNPU made for it.
    status = ClaimStatusWorker(
        KubeClaimStatus(gated_plane.api_client), prepared=node.container.preparer().prepared,
        inventory=node.container.inventory().known, driver=node.driver, node=node.name,
        threaded=False,
    )  # fmt: skip
    for ref in refs:
        status.report(ref)
    status.run_due()
    written = {
        ref.name: _claim(gated_plane, namespace, ref.name)["status"]["devices"] for ref in refs
    }
    made = sorted((e["data"]["vnpuId"], e["data"]["vnpuTemplate"]) for [e] in written.values())
    assert made == [(100, "vir05_1c_8g"), (101, "vir05_1c_8g")]

    assert node.container.preparer().unprepare(refs) == {r.uid: None for r in refs}
    assert state_of(node.npu_smi.directory)["0/0"] == []


def test_an_extended_resource_pod_gets_two_whole_npus(
    gated_plane: ControlPlane, tmp_path: Path
) -> None:
    node = PluginNode(gated_plane, tmp_path, vnpu="none")
    namespace = gated_plane.create_namespace(f"ext-{uuid.uuid4().hex[:6]}")
    _device_class(
        gated_plane,
        f"{node.name}-ascend910",
        f'device.driver == "{node.driver}" && '
        f'device.attributes["{node.driver}"].chipName.startsWith("910")',
        extended="huawei.com/Ascend910",
    )
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "classic", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {
            "requests": {"huawei.com/Ascend910": "2"}, "limits": {"huawei.com/Ascend910": "2"}}}]},
    }  # fmt: skip
    gated_plane.kubectl("create", "-f", "-", input=json.dumps(pod))
    decided = _decided(gated_plane, namespace, "classic")
    assert decided["spec"].get("nodeName") == node.name
    status = _wait_for_claim_status(gated_plane, namespace, "classic")
    claim = _claim(gated_plane, namespace, status["resourceClaimName"])
    devices = _allocated(claim)
    assert len(devices) == 2
    assert all(d.startswith("npu-") for d in devices)


def _wait_for_claim_status(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        pod = json.loads(plane.kubectl("get", "pod", "-n", namespace, name, "-o", "json").stdout)
        status: dict[str, Any] | None = pod.get("status", {}).get("extendedResourceClaimStatus")
        if status:
            return status
        assert time.monotonic() < deadline, (
            f"pod {name} has no extendedResourceClaimStatus: {pod.get('status')}"
        )
        time.sleep(0.3)


def test_a_server_without_the_gate_gets_whole_chips(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """v1.34.3 with default gates drops sharedCounters: the start-up probe sees it, and the pool
    is whole chips only, published once and stable (no update loop over dropped fields)."""
    node = PluginNode(control_plane, tmp_path, vnpu="templates")
    cluster = KubeCluster(control_plane.api_client)
    assert cluster.partitionable_layout(node=node.name, driver=node.driver) is None
    stored = cluster.list_slices(driver=node.driver)
    assert [d.name for s in stored for d in s.devices] == [f"npu-{i}" for i in range(8)]
    before = _slice_versions(control_plane, node.driver)
    node.container.publisher().publish()
    assert _slice_versions(control_plane, node.driver) == before


def _slice_versions(plane: ControlPlane, driver: str) -> dict[str, str]:
    listed = json.loads(
        plane.kubectl(
            "get", "resourceslices", "--field-selector", f"spec.driver={driver}", "-o", "json"
        ).stdout
    )
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in listed["items"]}
