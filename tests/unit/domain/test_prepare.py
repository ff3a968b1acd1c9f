"""What preparing a claim means on one node, computed without side effects.

Hardware facts used: an NPU's character device is `/dev/davinci<physical id>`; every container
also needs the shared `/dev/davinci_manager`, `/dev/devmm_svm` and `/dev/hisi_hdc`; the Ascend
runtime reads ASCEND_VISIBLE_DEVICES as physical ids.
"""

from collections.abc import Mapping, Sequence

import attrs
import pytest

from npu_dra.domain.checkpoint import Checkpoint
from npu_dra.domain.claims import (
    Allocation,
    AllocationResult,
    ClaimRef,
    ClaimSpec,
    DeviceRequest,
    ResourceClaim,
)
from npu_dra.domain.device import Device, Health, HostFile, HostFiles, NodeInventory
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceClassName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.prepare import NodeContext, plan_prepare
from npu_dra.domain.profile import ASCEND_NPU

DRIVER = DriverName("npu.huawei.com")
SHARED = {"/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"}
UID = "c937b261-3809-5c37-bb79-242dfdf6b5d2"  # starts with a letter
DIGIT_UID = "722c0d8b-bc28-5d72-86fc-ebf33a5ce0f2"


def npu(index: int, physical_id: int, health: Health = Health.HEALTHY) -> Device:
    return Device(
        name=DeviceName(f"npu-{index}"),
        physical_id=physical_id,
        logic_id=index,
        card_id=index,
        chip_id=0,
        chip_name="910B4",
        memory_bytes=32 * 2**30,
        health=health,
    )


# Names and physical ids deliberately differ, so a test can tell which one a path was built from.
NODE = NodeContext(
    DRIVER,
    PoolName("node-a"),
    NodeInventory(
        NodeName("node-a"),
        (
            npu(0, 4),
            npu(1, 5),
            npu(2, 6),
            npu(3, 7, Health.UNHEALTHY),
            npu(4, 0, Health.DEGRADED),
        ),
        HostFiles(device_nodes=frozenset(n.removeprefix("/dev/") for n in SHARED)),
    ),
    ASCEND_NPU,
)


def result(
    device: str,
    *,
    pool: str = "node-a",
    driver: str = DRIVER,
    request: str = "npu",
    admin: bool = False,
) -> AllocationResult:
    return AllocationResult(
        RequestName(request), DriverName(driver), PoolName(pool), DeviceName(device), admin
    )


def claim(*results: AllocationResult, uid: str = UID, allocated: bool = True) -> ResourceClaim:
    ref = ClaimRef(Namespace("ascend-dra"), ClaimName("npu-claim"), ClaimUID(uid))
    spec = ClaimSpec((DeviceRequest(RequestName("npu"), DeviceClassName("npu.huawei.com")),))
    return ResourceClaim(ref, spec, Allocation(results) if allocated else None)


def plan(
    wanted: ResourceClaim, holders: Mapping[DeviceName, ClaimUID] | None = None
) -> tuple[list[str], list[str], set[str], tuple[str, ...]]:
    """(prepared device names, per-device nodes, shared nodes, env) of a successful plan."""
    planned = plan_prepare(wanted, NODE, holders or {})
    assert planned.spec is not None
    per_device = [n.path for d in planned.spec.devices for n in d.edits.device_nodes]
    shared = {n.path for n in planned.spec.edits.device_nodes}
    return [d.device for d in planned.claim.devices], per_device, shared, planned.spec.edits.env


def test_the_spec_names_exactly_the_allocated_devices_plus_the_shared_nodes() -> None:
    names, per_device, shared, _ = plan(claim(result("npu-0"), result("npu-2")))
    assert names == ["npu-0", "npu-2"]
    assert per_device == ["/dev/davinci4", "/dev/davinci6"]
    assert shared == SHARED


def test_visible_devices_lists_the_physical_ids_in_order() -> None:
    _, _, _, env = plan(claim(result("npu-2"), result("npu-0")))
    assert env == ("ASCEND_VISIBLE_DEVICES=4,6",)


def test_a_degraded_device_is_still_prepared() -> None:
    names, per_device, _, env = plan(claim(result("npu-4")))
    assert (names, per_device, env) == (["npu-4"], ["/dev/davinci0"], ("ASCEND_VISIBLE_DEVICES=0",))


def test_other_drivers_results_are_skipped() -> None:
    wanted = claim(result("gpu-0", driver="gpu.example.com", pool="other"), result("npu-1"))
    names, per_device, _, env = plan(wanted)
    assert names == ["npu-1"]
    assert per_device == ["/dev/davinci5"]
    assert env == ("ASCEND_VISIBLE_DEVICES=5",)


def test_a_claim_with_only_other_drivers_results_gets_no_spec() -> None:
    planned = plan_prepare(claim(result("gpu-0", driver="gpu.example.com")), NODE, {})
    assert planned.spec is None
    assert planned.claim.devices == ()
    assert planned.claim.ref.uid == UID


def test_an_unallocated_claim_is_refused() -> None:
    with pytest.raises(PrepareError, match="is not allocated"):
        plan_prepare(claim(allocated=False), NODE, {})


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ([result("npu-0", pool="node-b")], "allocated from pool 'node-b', this node is 'node-a'"),
        ([result("npu-9")], "device 'npu-9': no such device on node 'node-a'"),
        ([result("npu-0"), result("npu-3")], "device 'npu-3': device is Unhealthy"),
    ],
)
def test_a_result_this_node_cannot_honour_is_refused_by_name(
    results: Sequence[AllocationResult], message: str
) -> None:
    with pytest.raises(PrepareError, match=message) as refused:
        plan_prepare(claim(*results), NODE, {})
    assert UID in str(refused.value)


def test_a_device_another_claim_holds_is_refused() -> None:
    holders = {DeviceName("npu-1"): ClaimUID("other-claim")}
    with pytest.raises(PrepareError, match="already prepared for claim other-claim"):
        plan_prepare(claim(result("npu-1")), NODE, holders)


def test_a_device_this_claim_holds_is_prepared_again() -> None:
    names, *_ = plan(claim(result("npu-1")), {DeviceName("npu-1"): ClaimUID(UID)})
    assert names == ["npu-1"]


def test_admin_access_may_use_a_device_another_claim_holds() -> None:
    planned = plan_prepare(
        claim(result("npu-1", admin=True)), NODE, {DeviceName("npu-1"): ClaimUID("other-claim")}
    )
    assert [(d.device, d.admin_access) for d in planned.claim.devices] == [("npu-1", True)]


def test_admin_access_devices_do_not_become_held() -> None:
    planned = plan_prepare(claim(result("npu-1", admin=True)), NODE, {})
    assert Checkpoint().with_claim(planned.claim).holders() == {}


def test_cdi_names_carry_the_claim_uid() -> None:
    planned = plan_prepare(claim(result("npu-0"), result("npu-1")), NODE, {})
    assert planned.spec is not None
    assert [d.name for d in planned.spec.devices] == [f"{UID}-npu-0", f"{UID}-npu-1"]
    assert planned.spec.kind == "k8s.npu.huawei.com/npu"
    assert [d.cdi_ids for d in planned.claim.devices] == [
        (f"k8s.npu.huawei.com/npu={UID}-npu-0",),
        (f"k8s.npu.huawei.com/npu={UID}-npu-1",),
    ]


def test_two_claims_on_one_device_get_different_cdi_names() -> None:
    first = plan_prepare(claim(result("npu-0")), NODE, {})
    second = plan_prepare(claim(result("npu-0"), uid=DIGIT_UID), NODE, {})
    assert first.claim.devices[0].cdi_ids != second.claim.devices[0].cdi_ids


def test_cdi_version_is_0_5_0_when_a_device_name_starts_with_a_digit() -> None:
    digit = plan_prepare(claim(result("npu-0"), uid=DIGIT_UID), NODE, {})
    letter = plan_prepare(claim(result("npu-0"), uid=UID), NODE, {})
    assert digit.spec is not None
    assert letter.spec is not None
    assert digit.spec.version == "0.5.0"
    assert letter.spec.version == "0.3.0"


def test_prepared_devices_report_the_request_without_its_subrequest() -> None:
    planned = plan_prepare(claim(result("npu-0", request="npu/big")), NODE, {})
    assert planned.claim.devices[0].request_names == ("npu",)
    assert planned.claim.devices[0].pool == "node-a"


def test_planning_is_deterministic() -> None:
    wanted = claim(result("npu-2"), result("npu-0"))
    assert plan_prepare(wanted, NODE, {}) == plan_prepare(wanted, NODE, {})
    reordered = plan_prepare(claim(result("npu-0"), result("npu-2")), NODE, {})
    assert reordered.spec == plan_prepare(wanted, NODE, {}).spec


def test_a_node_without_davinci_manager_gets_an_error_not_a_spec() -> None:
    bare = attrs.evolve(NODE, inventory=attrs.evolve(NODE.inventory, host=HostFiles()))
    with pytest.raises(PrepareError, match="davinci_manager is missing"):
        plan_prepare(claim(result("npu-0")), bare, {})


def test_the_plan_uses_the_inventory_s_dev_root_and_driver_files() -> None:
    host = HostFiles(
        "/srv/dev",
        frozenset({"davinci_manager"}),
        (HostFile("/srv/npu-smi", "/usr/local/bin/npu-smi"),),
    )
    moved = attrs.evolve(NODE, inventory=attrs.evolve(NODE.inventory, host=host))
    planned = plan_prepare(claim(result("npu-0")), moved, {})
    assert planned.spec is not None
    assert [n.source for d in planned.spec.devices for n in d.edits.device_nodes] == [
        "/srv/dev/davinci4"
    ]
    assert [(m.host_path, m.container_path) for m in planned.spec.edits.mounts] == [
        ("/srv/npu-smi", "/usr/local/bin/npu-smi")
    ]


def test_each_prepared_device_records_which_physical_device_it_is() -> None:
    """The checkpoint's identity: after a reboot a name may point at another chip."""
    on_bus = attrs.evolve(NODE.inventory.devices[0], pci_bus_id="0000:c1:00.0")
    gpu_like = attrs.evolve(NODE.inventory.devices[1], uuid="GPU-1", pci_bus_id="0000:18:00.0")
    inventory = attrs.evolve(
        NODE.inventory, devices=(on_bus, gpu_like, *NODE.inventory.devices[2:])
    )
    node = attrs.evolve(NODE, inventory=inventory)
    planned = plan_prepare(claim(result("npu-0"), result("npu-1"), result("npu-2")), node, {})
    assert [d.identity for d in planned.claim.devices] == ["pci:0000:c1:00.0", "uuid:GPU-1", None]
