"""One contract for the question the publisher asks before it publishes a shared chip, over the
in-memory cluster (with and without consumable capacity) and real API servers (v1.34.3, where
DRAConsumableCapacity is off, and v1.37.2, where it is on): `serves_consumable_capacity` says
exactly whether a published multi-allocatable chip keeps allowMultipleAllocations and its
request policies, so the publisher can trust it to choose between that form and fixed shares.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import attrs
import pytest

from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.cluster.kube.consumable_probe import KubeConsumableCapacity
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.app.services.chip_sharing.forms import ServesConsumableCapacity
from npu_dra.domain.chip_sharing.policy import SharingPolicy
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import desired_slices
from npu_dra.domain.ports import ClusterApi
from tests.contract.cluster_admins import CONTRACT_DRIVERS, WAIT_S, KubeAdmin
from tests.support.k8s_fixtures import V137, plane_for

DRIVER = DriverName(f"sharing{CONTRACT_DRIVERS}")
GI = 2**30


@attrs.frozen
class Ports:
    cluster: ClusterApi
    support: ServesConsumableCapacity
    node: NodeName
    gate_on: bool  # DRAConsumableCapacity as this server runs (1.34: off, on by default from 1.36)


def memory_ports(consumable: bool) -> Ports:
    memory = MemoryCluster(consumable=consumable)
    node = NodeName("node-a")
    memory.create({"kind": "Node", "metadata": {"name": node}})
    return Ports(memory, memory, node, consumable)


@pytest.fixture(
    params=[
        "memory-consumable",
        "memory-without",
        pytest.param("kube-v1.34.3", marks=pytest.mark.e2e),
        pytest.param("kube-v1.37.2", marks=[pytest.mark.e2e, pytest.mark.k8s_version(V137)]),
    ]
)
def ports(request: pytest.FixtureRequest) -> Iterator[Ports]:
    if request.param.startswith("memory"):
        yield memory_ports(request.param == "memory-consumable")
        return
    plane = plane_for(request, request.param.removeprefix("kube-"))
    admin = KubeAdmin(plane)
    node = NodeName(f"contract-{uuid.uuid4().hex[:6]}")
    admin.create_node(node)
    api = plane.api_client
    try:
        cluster = KubeCluster(api, retry_budget_s=WAIT_S)
        yield Ports(cluster, KubeConsumableCapacity(api), node, request.param.endswith("v1.37.2"))
    finally:
        admin.clean_up()


def test_the_answer_says_whether_a_published_shared_chip_stays_multi_allocatable(
    ports: Ports,
) -> None:
    chip = Device(DeviceName("npu-0"), 0, 0, 0, 0, "910B4", 32 * GI, aicore_count=20)
    inventory = NodeInventory(ports.node, (chip,))
    slices = desired_slices(
        inventory, driver=DRIVER, generation=0, sharing=SharingPolicy(consumable=True)
    )

    served = ports.support.serves_consumable_capacity(node=ports.node, driver=DRIVER)
    assert served is ports.gate_on
    [stored] = ports.cluster.publish_pool(node=ports.node, driver=DRIVER, slices=slices)

    [published] = stored.devices
    assert published.allow_multiple_allocations is served
    assert bool(published.request_policies) is served
    if served:
        assert published == slices[0].devices[0]


def test_the_question_stores_nothing(ports: Ports) -> None:
    ports.support.serves_consumable_capacity(node=ports.node, driver=DRIVER)
    assert ports.cluster.list_slices(driver=DRIVER) == ()
