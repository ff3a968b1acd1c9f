"""Device taints (KEP-5055) on real API servers and the real kube-scheduler.

On v1.37.2 (DRADeviceTaints GA) and on v1.34.3 with the gate switched on, an NPU the
fake npu-smi flips to Alarm stays in the node's ResourceSlice with a NoSchedule taint, published
by the first health probe after the flip; a pod whose claim wants that NPU and does not tolerate
the taint stays unscheduled, and once the NPU is OK again the taint goes and the pod is bound.
On v1.34.3 with default gates the API server drops taints: the plugin finds that out at start,
says so once, and leaves the NPU out of the slice instead, as before.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from npu_dra.adapters.cluster.kube.device_taints import KubeDeviceTaintSupport
from npu_dra.domain.ids import DriverName, NodeName
from tests.e2e.plugin_process import DRIVER, FakeNode, PluginProcess, fake_node, plugin_process
from tests.e2e.seed_cluster import (
    NAMESPACE,
    SCHEDULE_S,
    access_applied,
    node_devices,
    pod_bound_kubeconfig,
    read_claim,
    read_pod,
)
from tests.e2e.seed_yaml import SEED_POD_SPEC
from tests.support.controlplane import DEFAULT_VERSION, ControlPlane, wait_for
from tests.support.fake_npu_smi import FakeNpuSmi
from tests.support.k8s_fixtures import V137, plane_for

HEALTH_INTERVAL_S = 2.0
FLIPPED = 2  # npu-2: card 2 of the recorded 910B4 node
GATED = f"{DEFAULT_VERSION}+DRADeviceTaints"
TAINT = {"key": f"{DRIVER}/health", "value": "Unhealthy", "effect": "NoSchedule"}


@dataclass
class TaintNode:
    plane: ControlPlane
    node: FakeNode
    smi: FakeNpuSmi
    plugin: PluginProcess

    def devices(self) -> dict[str, dict[str, Any]]:
        return node_devices(self.plane, self.node.name)

    def probes(self) -> int:
        return self.smi.calls().count("info")

    def wait(self, check: Any, what: str) -> None:
        try:
            wait_for(check, timeout=SCHEDULE_S, what=what)
        except TimeoutError as error:
            raise AssertionError(f"{error}\n--- plugin log:\n{self.plugin.tail()}") from None


@contextlib.contextmanager
def taint_node(plane: ControlPlane) -> Iterator[TaintNode]:
    name = f"taint-{uuid.uuid4().hex[:6]}"
    with contextlib.ExitStack() as stack:
        stack.enter_context(access_applied(plane))
        node = stack.enter_context(fake_node(name))
        plane.create_ready_node(name)
        stack.callback(plane.kubectl, "delete", "node", name, check=False)
        token = pod_bound_kubeconfig(plane, node)
        smi_dir = node.npu_smi.parent
        smi = FakeNpuSmi(smi_dir, yaml.safe_load((smi_dir / "manifest.yaml").read_text()))
        plugin = stack.enter_context(
            plugin_process(node, token, health_interval_s=HEALTH_INTERVAL_S)
        )
        found = TaintNode(plane, node, smi, plugin)
        found.wait(lambda: len(found.devices()) == 8, f"8 NPUs of {name} published")
        yield found


@pytest.fixture(
    scope="module",
    params=[pytest.param(V137, marks=pytest.mark.k8s_version(V137)), GATED],
)
def tainting(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TaintNode]:
    """A node plugin on a control plane that keeps device taints."""
    if request.param == V137:
        with taint_node(plane_for(request, V137)) as node:
            yield node
        return
    bin_dir: Path = request.getfixturevalue("k8s_bin_dir")
    gates = {"DRADeviceTaints": True}
    work = tmp_path_factory.mktemp("plane-taints")
    with ControlPlane(bin_dir, work, feature_gates=gates) as plane, taint_node(plane) as node:
        yield node


def claim_and_pod(suffix: str) -> str:
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: npu-{FLIPPED}-{suffix}
  namespace: {NAMESPACE}
spec:
  devices:
    requests:
    - name: npu
      exactly:
        deviceClassName: {DRIVER}
        selectors:
        - cel:
            expression: device.attributes["{DRIVER}"].physicalId == {FLIPPED}
---
apiVersion: v1
kind: Pod
metadata:
  name: npu-{FLIPPED}-{suffix}
  namespace: {NAMESPACE}
spec:
  resourceClaims:
  - name: npu
    resourceClaimName: npu-{FLIPPED}-{suffix}
{SEED_POD_SPEC}"""


def node_events(node: TaintNode) -> list[dict[str, Any]]:
    """The plugin's events.k8s.io Events on the Node (RBAC from deploy/manifests)."""
    found = client.EventsV1Api(node.plane.api_client).list_namespaced_event(
        "default", _preload_content=False
    )
    return [
        e
        for e in json.loads(found.data)["items"]
        if e["regarding"].get("name") == node.node.name and e["reason"] == "DeviceUnhealthy"
    ]


def unschedulable(plane: ControlPlane, pod: str) -> dict[str, Any] | None:
    conditions = read_pod(plane, pod)["status"].get("conditions") or []
    return next(
        (c for c in conditions if c["type"] == "PodScheduled" and c["status"] == "False"), None
    )


def test_an_alarm_taints_the_npu_and_keeps_an_untolerating_pod_off_it_until_it_recovers(
    tainting: TaintNode,
) -> None:
    plane, name = tainting.plane, f"npu-{FLIPPED}-{uuid.uuid4().hex[:6]}"
    probes_before = tainting.probes()
    tainting.smi.set_health(FLIPPED, "Alarm")

    tainting.wait(
        lambda: tainting.devices()[f"npu-{FLIPPED}"].get("taints"), f"npu-{FLIPPED} tainted"
    )

    [taint] = tainting.devices()[f"npu-{FLIPPED}"]["taints"]
    assert {k: taint[k] for k in TAINT} == TAINT
    assert "timeAdded" in taint  # stamped by the server: it kept the field
    assert len(tainting.devices()) == 8  # broken, not gone
    # Within one health interval: the first probe that saw Alarm published the taint (one
    # more may have started meanwhile).
    assert tainting.probes() - probes_before <= 2
    tainting.wait(lambda: node_events(tainting), f"a DeviceUnhealthy event on {tainting.node.name}")
    [event] = node_events(tainting)
    assert event["type"] == "Warning"
    assert event["note"].startswith(f"npu-{FLIPPED} (910B4")
    try:
        plane.kubectl("apply", "-f", "-", input=claim_and_pod(name.rsplit("-", 1)[1]))
        tainting.wait(lambda: unschedulable(plane, name), f"{name} PodScheduled=False")
        assert read_pod(plane, name)["spec"].get("nodeName") is None
        assert read_claim(plane, name)["status"].get("allocation") is None

        tainting.smi.set_health(FLIPPED, "OK")

        tainting.wait(
            lambda: not tainting.devices()[f"npu-{FLIPPED}"].get("taints"), "taint removed"
        )
        tainting.wait(lambda: read_pod(plane, name)["spec"].get("nodeName"), f"{name} bound")
        assert read_pod(plane, name)["spec"]["nodeName"] == tainting.node.name
        [result] = read_claim(plane, name)["status"]["allocation"]["devices"]["results"]
        assert result["device"] == f"npu-{FLIPPED}"
    finally:
        tainting.smi.set_health(FLIPPED, "OK")
        # Not waited for: no kubelet ever confirms the bound pod's end.
        for kind in ("pod", "resourceclaim"):
            plane.kubectl(
                "delete",
                kind,
                name,
                "-n",
                NAMESPACE,
                "--grace-period=0",
                "--force",
                "--wait=false",
                check=False,
            )


def test_the_plugin_asks_the_server_with_the_first_alarm_and_says_it_taints(
    tainting: TaintNode,
) -> None:
    """Asked once a device is not healthy (a healthy pool publishes the same either way)."""
    tainting.smi.set_health(FLIPPED, "Alarm")
    try:
        tainting.wait(
            lambda: "serves device taints" in tainting.plugin.tail(400), "the plugin said it"
        )
    finally:
        tainting.smi.set_health(FLIPPED, "OK")
    support = KubeDeviceTaintSupport(tainting.plane.api_client)
    node = NodeName(tainting.node.name)
    assert support.serves_device_taints(node=node, driver=DriverName(DRIVER)) is True


def test_without_the_gate_the_alarmed_npu_leaves_the_slice_and_that_is_said_once(
    control_plane: ControlPlane,
) -> None:
    support = KubeDeviceTaintSupport(control_plane.api_client)
    with taint_node(control_plane) as node:
        asked = support.serves_device_taints(
            node=NodeName(node.node.name), driver=DriverName(DRIVER)
        )
        node.smi.set_health(FLIPPED, "Alarm")
        node.wait(lambda: f"npu-{FLIPPED}" not in node.devices(), f"npu-{FLIPPED} removed")
        node.smi.set_health(FLIPPED, "OK")
        node.wait(lambda: f"npu-{FLIPPED}" in node.devices(), f"npu-{FLIPPED} back")
        log = node.plugin.tail(400)
    assert asked is False
    assert log.count("does not keep device taints") == 1
