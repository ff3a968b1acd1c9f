"""One contract for the DeviceTaintSupport and EventRecorder ports, over the in-memory cluster
and real API servers (v1.34.3, where DRADeviceTaints is off, and v1.37.2, where it is GA):

- `serves_device_taints` answers exactly whether a published taint is kept: the plugin trusts it
  to choose between tainting and removing;
- a recorded event can be read back as an events.k8s.io/v1 Event on the object it names.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client

from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.cluster.kube.device_taints import KubeDeviceTaintSupport
from npu_dra.adapters.cluster.kube.events import KubeEvents
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.domain.device import Device, Health, NodeInventory
from npu_dra.domain.device_taints import TaintPolicy
from npu_dra.domain.events import ClusterEvent, EventType, Regarding
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import desired_slices
from npu_dra.domain.ports import ClusterApi, DeviceTaintSupport, EventRecorder
from tests.contract.cluster_admins import CONTRACT_DRIVERS, WAIT_S, KubeAdmin
from tests.support.k8s_fixtures import V137, plane_for

DRIVER = DriverName(f"taints{CONTRACT_DRIVERS}")


class Ports:
    def __init__(
        self,
        cluster: ClusterApi,
        taints: DeviceTaintSupport,
        events: EventRecorder,
        stored_events: Callable[[], list[dict[str, Any]]],
        node: NodeName,
    ) -> None:
        self.cluster, self.taints, self.events = cluster, taints, events
        self.stored_events, self.node = stored_events, node


def memory_ports(device_taints: bool) -> Ports:
    memory = MemoryCluster(device_taints=device_taints)
    node = NodeName("node-a")
    memory.create({"kind": "Node", "metadata": {"name": node}})
    return Ports(memory, memory, memory, lambda: memory.list("Event"), node)


@pytest.fixture(
    params=[
        "memory-with-taints",
        "memory-without-taints",
        pytest.param("kube-v1.34.3", marks=pytest.mark.e2e),
        pytest.param("kube-v1.37.2", marks=[pytest.mark.e2e, pytest.mark.k8s_version(V137)]),
    ]
)
def ports(request: pytest.FixtureRequest) -> Iterator[Ports]:
    if request.param.startswith("memory"):
        yield memory_ports(request.param == "memory-with-taints")
        return
    version = request.param.removeprefix("kube-")
    plane = plane_for(request, version)
    admin = KubeAdmin(plane)
    node = NodeName(f"contract-{uuid.uuid4().hex[:6]}")
    admin.create_node(node)
    api = plane.api_client

    def stored_events() -> list[dict[str, Any]]:
        found = client.EventsV1Api(api).list_namespaced_event("default", _preload_content=False)
        return [e for e in json.loads(found.data)["items"] if e["regarding"]["name"] == node]

    try:
        yield Ports(
            KubeCluster(api, retry_budget_s=WAIT_S),
            KubeDeviceTaintSupport(api, retry_budget_s=WAIT_S),
            KubeEvents(api, instance="contract"),
            stored_events,
            node,
        )
    finally:
        admin.clean_up()


def test_serves_device_taints_says_whether_a_published_taint_is_kept(ports: Ports) -> None:
    device = Device(DeviceName("npu-0"), 0, 0, 0, 0, "910B4", 2**30, health=Health.UNHEALTHY)
    inventory = NodeInventory(ports.node, (device,))
    policy = TaintPolicy().for_driver(DRIVER)
    slices = desired_slices(inventory, driver=DRIVER, generation=0, taints=policy)

    served = ports.taints.serves_device_taints(node=ports.node, driver=DRIVER)
    [stored] = ports.cluster.publish_pool(node=ports.node, driver=DRIVER, slices=slices)

    [published] = stored.devices
    assert bool(published.taints) is served
    if served:
        assert published.taints == policy.taints_of(device)


def test_a_recorded_event_is_read_back_on_the_object_it_names(ports: Ports) -> None:
    event = ClusterEvent(
        Regarding("Node", ports.node),
        "DeviceUnhealthy",
        "npu-0: Healthy -> Critical",
        EventType.WARNING,
    )
    ports.events.record_event(event=event)

    [stored] = ports.stored_events()
    assert (stored["reason"], stored["type"], stored["note"]) == (
        "DeviceUnhealthy",
        "Warning",
        "npu-0: Healthy -> Critical",
    )
    assert (stored["regarding"]["kind"], stored["regarding"]["name"]) == ("Node", ports.node)
    assert stored["metadata"]["name"].startswith(f"{ports.node}.")
    assert stored["reportingController"] == "npu-dra.io/kubelet-plugin"
