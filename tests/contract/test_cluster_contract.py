"""Every ClusterApi adapter behaves the same: the in-memory API and KubeCluster on a real
Kubernetes v1.34.3 API server hold to one contract for slices, claims, classes and the watch.

Each adapter comes with a tiny `Admin` (cluster_admins.py): what a cluster admin or the kubelet
does to the same store behind the plugin's back. Every test uses its own node and driver names.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.kube_shapes.slices import slice_to_api
from npu_dra.domain.claims import AllocationMode, ClaimRef
from npu_dra.domain.errors import NotFound
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceClassName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
)
from npu_dra.domain.other_driver import OtherDriverPublishes
from npu_dra.domain.pool import PoolRef, PublishedDevice, ResourceSlice
from npu_dra.domain.quantity import Quantity
from tests.contract.cluster_admins import (
    CONTRACT_DRIVERS,
    WAIT_S,
    Admin,
    Calls,
    Cluster,
    KubeAdmin,
    MemoryAdmin,
)
from tests.support.controlplane import ControlPlane

NAMESPACE = "cluster-contract"


@pytest.fixture(scope="module")
def claim_namespace(request: pytest.FixtureRequest) -> Iterator[str]:
    """Only the real server needs one; made the first time a kube test asks for it."""
    plane: ControlPlane = request.getfixturevalue("control_plane")
    plane.create_namespace(NAMESPACE)
    yield NAMESPACE
    plane.delete_namespace(NAMESPACE)


@pytest.fixture(params=["memory", pytest.param("kube", marks=pytest.mark.e2e)])
def adapter(request: pytest.FixtureRequest) -> Iterator[tuple[Cluster, Admin]]:
    if request.param == "memory":
        memory = MemoryCluster()
        yield memory, MemoryAdmin(memory)
        return
    plane: ControlPlane = request.getfixturevalue("control_plane")
    request.getfixturevalue("claim_namespace")
    admin = KubeAdmin(plane)
    try:
        yield KubeCluster(plane.api_client, retry_budget_s=WAIT_S), admin
    finally:
        admin.clean_up()


@pytest.fixture
def cluster(adapter: tuple[Cluster, Admin]) -> Cluster:
    return adapter[0]


@pytest.fixture
def admin(adapter: tuple[Cluster, Admin]) -> Admin:
    return adapter[1]


@pytest.fixture
def node() -> NodeName:
    return NodeName(f"cn-{uuid.uuid4().hex[:8]}")


@pytest.fixture
def driver() -> DriverName:
    return DriverName(f"d{uuid.uuid4().hex[:8]}{CONTRACT_DRIVERS}")


def devices(count: int, *, chip: str = "910B4", first: int = 0) -> tuple[PublishedDevice, ...]:
    return tuple(
        PublishedDevice(
            DeviceName(f"npu-{n}"),
            {"chipName": chip, "physicalId": n},
            {"memCapacity": Quantity.parse("32Gi")},
        )
        for n in range(first, first + count)
    )


def pool(
    node: NodeName, driver: DriverName, found: tuple[PublishedDevice, ...], *, per_slice: int = 128
) -> tuple[ResourceSlice, ...]:
    """The desired slices (generation 0: the adapter picks the generation)."""
    chunks = [found[i : i + per_slice] for i in range(0, len(found), per_slice)] or [()]
    ref = PoolRef(PoolName(node), 0, len(chunks))
    return tuple(ResourceSlice(driver, node, ref, chunk) for chunk in chunks)


def device_names(slices: tuple[ResourceSlice, ...]) -> list[str]:
    return sorted(d.name for s in slices for d in s.devices)


def generations(slices: tuple[ResourceSlice, ...]) -> set[tuple[int, int]]:
    return {(s.pool.generation, s.pool.resource_slice_count) for s in slices}


# --- publishing ----------------------------------------------------------------------------


def test_publish_creates_slices_named_after_node_and_driver(
    cluster: Cluster, admin: Admin, node: NodeName, driver: DriverName
) -> None:
    stored = cluster.publish_pool(node=node, driver=driver, slices=pool(node, driver, devices(3)))

    [raw] = admin.stored_slices(driver)
    assert raw["metadata"]["generateName"] == f"{node}-{driver}-"
    assert [s.name for s in stored] == [raw["metadata"]["name"]]
    assert raw["metadata"]["name"].startswith(f"{node}-{driver}-")
    assert (raw["spec"]["nodeName"], raw["spec"]["pool"]["name"]) == (node, node)
    assert device_names(stored) == ["npu-0", "npu-1", "npu-2"]
    assert raw["spec"]["devices"][0]["attributes"]["chipName"] == {"string": "910B4"}
    assert raw["spec"]["devices"][0]["capacity"]["memCapacity"] == {"value": "32Gi"}


def test_slices_are_owned_by_their_node_when_it_exists(
    cluster: Cluster, admin: Admin, node: NodeName, driver: DriverName
) -> None:
    uid = admin.create_node(node)
    orphan = NodeName(f"{node}-gone")

    cluster.publish_pool(node=node, driver=driver, slices=pool(node, driver, devices(1)))
    cluster.publish_pool(node=orphan, driver=driver, slices=pool(orphan, driver, devices(1)))

    owners = {
        o["spec"]["nodeName"]: o["metadata"].get("ownerReferences")
        for o in admin.stored_slices(driver)
    }
    assert owners == {
        node: [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": uid, "controller": True}],
        orphan: None,
    }


def test_pool_generation_starts_at_one_and_bumps_on_every_change(
    cluster: Cluster, node: NodeName, driver: DriverName
) -> None:
    seen = []
    for chip in ("910B4", "910B3", "910B4"):
        desired = pool(node, driver, devices(2, chip=chip))
        seen.append(generations(cluster.publish_pool(node=node, driver=driver, slices=desired)))

    assert seen == [{(1, 1)}, {(2, 1)}, {(3, 1)}]
    assert generations(cluster.list_slices(driver=driver, node=node)) == {(3, 1)}


def test_unchanged_content_keeps_generation_and_resource_version(
    cluster: Cluster, admin: Admin, node: NodeName, driver: DriverName
) -> None:
    cluster.publish_pool(node=node, driver=driver, slices=pool(node, driver, devices(4)))
    before = admin.stored_slices(driver)

    again = cluster.publish_pool(node=node, driver=driver, slices=pool(node, driver, devices(4)))

    after = admin.stored_slices(driver)
    assert [o["metadata"]["resourceVersion"] for o in after] == [
        o["metadata"]["resourceVersion"] for o in before
    ]
    assert generations(again) == {(1, 1)}


def test_two_hundred_devices_are_split_into_two_slices(
    cluster: Cluster, admin: Admin, node: NodeName, driver: DriverName
) -> None:
    stored = cluster.publish_pool(node=node, driver=driver, slices=pool(node, driver, devices(200)))

    assert generations(stored) == {(1, 2)}
    assert sorted(len(s.devices) for s in stored) == [72, 128]
    assert device_names(stored) == sorted(f"npu-{n}" for n in range(200))
    raw = admin.stored_slices(driver)
    assert [o["spec"]["pool"]["resourceSliceCount"] for o in raw] == [2, 2]
    assert all(len(o["spec"]["devices"]) <= 128 for o in raw)


def test_shrinking_the_pool_deletes_stale_slices(
    cluster: Cluster, admin: Admin, node: NodeName, driver: DriverName
) -> None:
    cluster.publish_pool(node=node, driver=driver, slices=pool(node, driver, devices(200)))

    stored = cluster.publish_pool(node=node, driver=driver, slices=pool(node, driver, devices(10)))

    assert generations(stored) == {(2, 1)}
    assert device_names(stored) == sorted(f"npu-{n}" for n in range(10))
    assert [o["metadata"]["name"] for o in admin.stored_slices(driver)] == [stored[0].name]


def test_a_pool_another_driver_of_the_name_wrote_is_left_to_it(
    cluster: Cluster, admin: Admin, node: NodeName, driver: DriverName
) -> None:
    """Huawei's own driver (same name) publishes deviceType and physicId only
    (domain/huawei_names.py; its 950 devices are named `npu-<physicId>` as ours, its 910 ones
    `Ascend910-<physicId>`, which the API server refuses: not a DNS label). Ours is refused,
    naming the other's devices, and theirs stay."""
    theirs = tuple(
        PublishedDevice(DeviceName(f"npu-{n}"), {"deviceType": "Ascend910A5", "physicId": n})
        for n in range(2)
    )
    [slice_] = pool(node, driver, theirs)
    admin.create(slice_to_api(slice_))

    with pytest.raises(OtherDriverPublishes, match=r"another DRA driver .* npu-0, npu-1"):
        cluster.publish_pool(node=node, driver=driver, slices=pool(node, driver, devices(2)))

    [raw] = admin.stored_slices(driver)
    assert raw["spec"]["devices"][0]["attributes"] == {
        "deviceType": {"string": "Ascend910A5"},
        "physicId": {"int": 0},
    }


def test_list_slices_filters_by_driver_and_node(
    cluster: Cluster, node: NodeName, driver: DriverName
) -> None:
    other_node = NodeName(f"{node}-b")
    other_driver = DriverName(f"other-{driver}")
    for n, d in ((node, driver), (other_node, driver), (node, other_driver)):
        cluster.publish_pool(node=n, driver=d, slices=pool(n, d, devices(1)))

    def pairs(**query: Any) -> list[tuple[str, str]]:
        return sorted((s.node_name, s.driver) for s in cluster.list_slices(**query))

    assert pairs(driver=driver) == sorted([(node, driver), (other_node, driver)])
    assert pairs(driver=driver, node=node) == [(node, driver)]
    assert pairs(driver=other_driver) == [(node, other_driver)]
    assert sorted(pairs(node=node)) == sorted([(node, driver), (node, other_driver)])
    cluster.publish_pool(node=node, driver=other_driver, slices=())  # clean up what we made
    cluster.publish_pool(node=other_node, driver=driver, slices=())
    assert pairs(driver=other_driver) == []


# --- claims and classes --------------------------------------------------------------------


def claim_body(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "npu",
                        "exactly": {
                            "deviceClassName": "npu.huawei.com",
                            "allocationMode": "All",
                            "selectors": [
                                {"cel": {"expression": "device.attributes['x'].numaNode == 6"}}
                            ],
                        },
                    }
                ]
            }
        },
    }


def test_get_claim_returns_the_claim_by_namespace_and_name(cluster: Cluster, admin: Admin) -> None:
    name = ClaimName(f"claim-{uuid.uuid4().hex[:8]}")
    made = admin.create(claim_body(name))
    ref = ClaimRef(Namespace(NAMESPACE), name, ClaimUID(made["metadata"]["uid"]))

    found = cluster.get_claim(ref=ref)

    assert found.ref == ref
    [request] = found.spec.requests
    assert (request.name, request.device_class_name) == ("npu", "npu.huawei.com")
    assert request.allocation_mode is AllocationMode.ALL
    assert request.selectors == ("device.attributes['x'].numaNode == 6",)
    assert found.allocation is None


def test_get_claim_raises_not_found_when_absent_or_replaced(cluster: Cluster, admin: Admin) -> None:
    name = ClaimName(f"claim-{uuid.uuid4().hex[:8]}")
    absent = ClaimRef(Namespace(NAMESPACE), ClaimName(f"{name}-absent"), ClaimUID("a-b-c"))
    with pytest.raises(NotFound):
        cluster.get_claim(ref=absent)
    admin.create(claim_body(name))
    replaced = ClaimRef(Namespace(NAMESPACE), name, ClaimUID(str(uuid.uuid4())))
    with pytest.raises(NotFound, match="replaced"):
        cluster.get_claim(ref=replaced)


def test_get_device_class(cluster: Cluster, admin: Admin) -> None:
    name = DeviceClassName(f"npu-{uuid.uuid4().hex[:8]}.example.com")
    expression = 'device.driver == "npu.huawei.com"'
    admin.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]},
        }
    )

    found = cluster.get_device_class(name=name)

    assert (found.name, found.selectors) == (name, (expression,))
    with pytest.raises(NotFound):
        cluster.get_device_class(name=DeviceClassName(f"absent-{name}"))


# --- the watch -----------------------------------------------------------------------------


def test_watch_calls_back_after_someone_deletes_a_slice_and_republish_restores(
    cluster: Cluster, admin: Admin, node: NodeName, driver: DriverName
) -> None:
    desired = pool(node, driver, devices(200))
    first = cluster.publish_pool(node=node, driver=driver, slices=desired)
    calls = Calls()
    watch = cluster.watch_slices(node=node, driver=driver, on_change=calls)
    try:
        quiet = calls.settle()
        admin.delete_slice(first[0].name or "")
        calls.wait_beyond(quiet, f"deleting ResourceSlice {first[0].name}")
    finally:
        watch.stop()
    assert len(admin.stored_slices(driver)) == 1

    restored = cluster.publish_pool(node=node, driver=driver, slices=desired)

    assert device_names(restored) == device_names(first)
    assert generations(restored) == {(2, 2)}
    assert sorted(o["metadata"]["name"] for o in admin.stored_slices(driver)) == sorted(
        s.name or "" for s in restored
    )


def test_a_stopped_watch_stays_silent(
    cluster: Cluster, admin: Admin, node: NodeName, driver: DriverName
) -> None:
    first = cluster.publish_pool(node=node, driver=driver, slices=pool(node, driver, devices(1)))
    calls = Calls()
    cluster.watch_slices(node=node, driver=driver, on_change=calls).stop()
    quiet = calls.settle()

    admin.delete_slice(first[0].name or "")

    time.sleep(1.0)
    assert calls.count == quiet


# --- the plugin's Node ---------------------------------------------------------------------


def test_a_node_exists_once_registered_and_not_before(
    cluster: Cluster, admin: Admin, node: NodeName
) -> None:
    assert cluster.node_exists(node=node) is False  # a mistyped --node-name
    admin.create_node(node)
    assert cluster.node_exists(node=node) is True


def test_the_kubelet_version_is_none_without_a_node_and_empty_until_reported(
    cluster: Cluster, admin: Admin, node: NodeName
) -> None:
    assert cluster.kubelet_version(node=node) is None
    admin.create_node(node)
    assert cluster.kubelet_version(node=node) == ""  # no kubelet has reported its status
