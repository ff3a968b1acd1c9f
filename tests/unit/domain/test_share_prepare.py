"""Preparing shares of chips (#31), computed without side effects: which chip a share uses,
which holds conflict, the CDI names and env a share gets, and that the checkpoint alone gives
the same spec back (restart repair).

Facts used: a 910B4 has 32 GiB and 20 AI cores (adapters/hardware/chips.py); a shareID is a
lowercase RFC 4122 UUID (kubernetes v1.36.3 pkg/apis/resource/validation validateUID).
"""

import attrs
import pytest

from npu_dra.adapters.checkpoint.codec import decode, encode
from npu_dra.domain.cdi import recorded_share
from npu_dra.domain.checkpoint import Checkpoint, gone_devices
from npu_dra.domain.chip_sharing.policy import SharingPolicy
from npu_dra.domain.chip_sharing.prepared import Share
from npu_dra.domain.claims import (
    Allocation,
    AllocationResult,
    ClaimRef,
    ClaimSpec,
    DeviceRequest,
    ResourceClaim,
)
from npu_dra.domain.device import Device, HostFiles, NodeInventory
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
from npu_dra.domain.prepare import NodeContext, PreparePlan, plan_prepare, recorded_spec
from npu_dra.domain.profile import ASCEND_NPU
from npu_dra.domain.quantity import Quantity

DRIVER = DriverName("npu.huawei.com")
FIRST = ClaimUID("a1111111-0000-4000-8000-000000000001")
SECOND = ClaimUID("b2222222-0000-4000-8000-000000000002")
HOST = HostFiles(device_nodes=frozenset({"davinci_manager", "devmm_svm", "hisi_hdc"}))
SHARE_A, SHARE_B = "0f3c6a2e-1d5b-4c7a-9e8f-2a1b3c4d5e6f", "7d9e1f20-3a4b-4c5d-8e6f-708192a3b4c5"


def chip(index: int) -> Device:
    return Device(
        DeviceName(f"npu-{index}"), index, index, index, 0, "910B4", 32 * 2**30,
        pci_bus_id=f"0000:c{index}:00.0", aicore_count=20,
    )  # fmt: skip


NODE = NodeContext(
    DRIVER,
    PoolName("node-a"),
    NodeInventory(NodeName("node-a"), (chip(0), chip(1)), HOST),
    ASCEND_NPU,
    SharingPolicy(shares=4),
)


def result(
    device: str,
    *,
    share_id: str | None = None,
    request: str = "npu",
    memory: str | None = None,
    aicores: int | None = None,
    admin: bool = False,
) -> AllocationResult:
    consumed = [] if memory is None else [("memCapacity", Quantity.parse(memory))]
    consumed += [] if aicores is None else [("aiCores", Quantity.of_bytes(aicores))]
    return AllocationResult(
        RequestName(request), DRIVER, PoolName("node-a"), DeviceName(device), admin,
        share_id=share_id, consumed_capacity=tuple(consumed),
    )  # fmt: skip


def claim(*results: AllocationResult, uid: ClaimUID = FIRST) -> ResourceClaim:
    ref = ClaimRef(Namespace("ns"), ClaimName(f"claim-{uid[:4]}"), uid)
    spec = ClaimSpec((DeviceRequest(RequestName("npu"), DeviceClassName("npu.huawei.com")),))
    return ResourceClaim(ref, spec, Allocation(results))


def prepared(*plans: PreparePlan) -> Checkpoint:
    checkpoint = Checkpoint()
    for plan in plans:
        checkpoint = checkpoint.with_claim(plan.claim)
    return checkpoint


def plan_beside(wanted: ResourceClaim, held: Checkpoint, node: NodeContext = NODE) -> PreparePlan:
    return plan_prepare(wanted, node, held.holders(), held.sharers())


def device_env(plan: PreparePlan) -> dict[str, tuple[str, ...]]:
    assert plan.spec is not None
    return {d.name: d.edits.env for d in plan.spec.devices}


def test_two_claims_hold_shares_of_one_chip_through_its_device_node() -> None:
    first = plan_beside(claim(result("npu-1", share_id=SHARE_A, memory="8Gi")), Checkpoint())
    second = plan_beside(
        claim(result("npu-1", share_id=SHARE_B, memory="4Gi"), uid=SECOND), prepared(first)
    )
    for plan in (first, second):
        assert plan.spec is not None
        assert [n.path for d in plan.spec.devices for n in d.edits.device_nodes] == [
            "/dev/davinci1"
        ]
        assert "ASCEND_VISIBLE_DEVICES=1" in plan.spec.edits.env
        [device] = plan.claim.devices
        assert (device.device, device.identity) == ("npu-1", "pci:0000:c1:00.0")
    assert [d.share_id for d in second.claim.devices] == [SHARE_B]
    assert prepared(first, second).sharers() == {"npu-1": frozenset({FIRST, SECOND})}
    assert prepared(first, second).holders() == {}


def test_two_claims_hold_two_fixed_share_devices_of_one_chip() -> None:
    first = plan_beside(claim(result("npu-0-share-0")), Checkpoint())
    second = plan_beside(claim(result("npu-0-share-3"), uid=SECOND), prepared(first))
    assert [d.device for d in second.claim.devices] == ["npu-0-share-3"]
    assert second.spec is not None
    assert [n.path for n in second.spec.devices[0].edits.device_nodes] == ["/dev/davinci0"]
    held = prepared(first, second)
    assert held.holders() == {"npu-0-share-0": FIRST, "npu-0-share-3": SECOND}
    assert held.sharers() == {"npu-0": frozenset({FIRST, SECOND})}


def test_the_same_fixed_share_device_is_never_prepared_for_two_claims() -> None:
    first = plan_beside(claim(result("npu-0-share-2")), Checkpoint())
    with pytest.raises(PrepareError, match=f"already prepared for claim {FIRST}"):
        plan_beside(claim(result("npu-0-share-2"), uid=SECOND), prepared(first))


@pytest.mark.parametrize("share", [result("npu-0-share-1"), result("npu-0", share_id=SHARE_A)])
def test_a_whole_chip_is_refused_while_another_claim_holds_a_share_of_it(
    share: AllocationResult,
) -> None:
    held = prepared(plan_beside(claim(share), Checkpoint()))
    with pytest.raises(PrepareError, match=f"already prepared for claim {FIRST}.*a share of npu-0"):
        plan_beside(claim(result("npu-0"), uid=SECOND), held)


@pytest.mark.parametrize("share", [result("npu-0-share-1"), result("npu-0", share_id=SHARE_A)])
def test_a_share_is_refused_while_another_claim_holds_the_chip_whole(
    share: AllocationResult,
) -> None:
    held = prepared(plan_beside(claim(result("npu-0")), Checkpoint()))
    with pytest.raises(PrepareError, match=f"already prepared for claim {FIRST}.*npu-0 whole"):
        plan_beside(claim(share, uid=SECOND), held)


def test_admin_access_beside_shares_conflicts_with_nothing() -> None:
    held = prepared(plan_beside(claim(result("npu-0", share_id=SHARE_A)), Checkpoint()))
    plan = plan_beside(claim(result("npu-0", admin=True), uid=SECOND), held)
    assert [d.admin_access for d in plan.claim.devices] == [True]


def test_two_shares_of_one_chip_in_one_claim_get_two_cdi_devices_and_one_visible_chip() -> None:
    plan = plan_beside(
        claim(
            result("npu-1", share_id=SHARE_A, memory="8Gi", aicores=2),
            result("npu-1", share_id=SHARE_B, memory="4Gi", aicores=3),
        ),
        Checkpoint(),
    )
    names = [d.cdi_ids[0].partition("=")[2] for d in plan.claim.devices]
    assert names == [
        f"{FIRST}-npu-1-{SHARE_A}-mem8192-aic2",
        f"{FIRST}-npu-1-{SHARE_B}-mem4096-aic3",
    ]
    assert plan.spec is not None
    assert sorted(d.name for d in plan.spec.devices) == sorted(names)
    assert [e for e in plan.spec.edits.env if e.startswith("ASCEND_VISIBLE")] == [
        "ASCEND_VISIBLE_DEVICES=1"
    ]
    # one request: a container gets both devices, so each tells the request's total on the chip
    total = (
        "NPU_DRA_DEVICE_1_SHARING=Shared",
        "NPU_DRA_DEVICE_1_MEMORY_MIB=12288",
        "NPU_DRA_DEVICE_1_AICORES=5",
    )
    assert list(device_env(plan).values()) == [total, total]


def test_shares_in_two_requests_each_tell_their_own_part() -> None:
    plan = plan_beside(
        claim(
            result("npu-1", share_id=SHARE_A, memory="8Gi", request="a"),
            result("npu-1", share_id=SHARE_B, memory="2Gi", request="b"),
        ),
        Checkpoint(),
    )
    memory = sorted(e for env in device_env(plan).values() for e in env if "MEMORY" in e)
    assert memory == ["NPU_DRA_DEVICE_1_MEMORY_MIB=2048", "NPU_DRA_DEVICE_1_MEMORY_MIB=8192"]


def test_a_share_tells_what_its_allocation_consumed_and_leaves_out_what_it_did_not_list() -> None:
    plan = plan_beside(claim(result("npu-0", share_id=SHARE_A, memory="6Gi")), Checkpoint())
    assert list(device_env(plan).values()) == [
        ("NPU_DRA_DEVICE_0_SHARING=Shared", "NPU_DRA_DEVICE_0_MEMORY_MIB=6144")
    ]


def test_a_fixed_share_tells_its_part_of_the_chip() -> None:
    plan = plan_beside(claim(result("npu-1-share-2")), Checkpoint())
    assert device_env(plan) == {
        f"{FIRST}-npu-1-share-2-mem8192-aic5": (
            "NPU_DRA_DEVICE_1_SHARING=Shared",
            "NPU_DRA_DEVICE_1_MEMORY_MIB=8192",  # 32 GiB / 4
            "NPU_DRA_DEVICE_1_AICORES=5",  # 20 / 4
        )
    }


def test_a_whole_chip_keeps_its_cdi_name_and_spec_as_before_sharing() -> None:
    plan = plan_beside(claim(result("npu-0")), Checkpoint())
    assert [d.cdi_ids for d in plan.claim.devices] == [(f"k8s.npu.huawei.com/npu={FIRST}-npu-0",)]
    assert device_env(plan) == {f"{FIRST}-npu-0": ()}


@pytest.mark.parametrize(
    ("sharing", "why"),
    [
        (None, "npu-0 is not a shared chip"),
        (SharingPolicy(chips=frozenset({DeviceName("npu-1")})), "npu-0 is not a shared chip"),
        (SharingPolicy(shares=2), "npu-0 is published in 2 shares"),
    ],
)
def test_a_fixed_share_this_node_does_not_publish_is_refused(
    sharing: SharingPolicy | None, why: str
) -> None:
    node = attrs.evolve(NODE, sharing=sharing)
    with pytest.raises(PrepareError, match=f"device 'npu-0-share-3': {why}"):
        plan_beside(claim(result("npu-0-share-3")), Checkpoint(), node)


@pytest.mark.parametrize(
    "results",
    [
        (result("npu-0-share-1"), result("npu-1")),
        (result("npu-1", share_id=SHARE_A, memory="8Gi", aicores=2),
         result("npu-1", share_id=SHARE_B, memory="1Gi")),
    ],
)  # fmt: skip
def test_the_checkpoint_alone_gives_the_spec_back(results: tuple[AllocationResult, ...]) -> None:
    plan = plan_beside(claim(*results), Checkpoint())
    # what restart repair does: the record, through the checkpoint's own format, and nothing else
    restored = decode(encode(prepared(plan))).claims[FIRST]
    changed_flags = attrs.evolve(NODE, sharing=SharingPolicy(shares=2))
    assert recorded_spec(restored, changed_flags) == plan.spec


def test_a_share_name_says_what_the_share_was_given() -> None:
    assert recorded_share(f"{FIRST}-npu-0-{SHARE_A}-mem8192-aic0") == Share(8192, 0)
    assert recorded_share(f"{FIRST}-npu-0-{SHARE_A}-mem512") == Share(512, None)
    assert recorded_share(f"{FIRST}-npu-0-{SHARE_A}") == Share()
    assert recorded_share(f"{FIRST}-npu-10-share-3") == Share()


def test_a_fixed_share_is_checked_against_its_chip_after_a_reboot() -> None:
    plan = plan_beside(claim(result("npu-1-share-0")), Checkpoint())
    swapped = attrs.evolve(chip(1), pci_bus_id="0000:99:00.0")
    inventory = NodeInventory(NodeName("node-a"), (chip(0), swapped), HOST)
    assert gone_devices(plan.claim, inventory) == (
        "npu-1 is now pci:0000:99:00.0, prepared as pci:0000:c1:00.0",
    )
    assert gone_devices(plan.claim, NODE.inventory) == ()
