"""The form a chip is published in while prepared claims hold it
(domain/chip_sharing/held_forms.py, #44):
the held form decides until released, whatever the flags or the API server say now.

Facts used: a 910B4 has 32 GiB and 20 AI cores (adapters/hardware/chips.py); a fixed share of 4
records 8192 MiB and 5 AI cores in its CDI device's name (domain/cdi.py share_cdi_device_name).
"""

from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from npu_dra.domain.chip_sharing.held_forms import held_forms
from npu_dra.domain.chip_sharing.policy import (
    FIXED,
    WHOLE,
    WITHHELD,
    ChipForm,
    SharingPolicy,
)
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import Device, HostFiles, NodeInventory
from npu_dra.domain.ids import ClaimName, ClaimUID, DeviceName, Namespace, NodeName, PoolName

NPU_0 = DeviceName("npu-0")
CHIP = Device(NPU_0, 0, 0, 0, 0, "910B4", 32 * 2**30, aicore_count=20)
INVENTORY = NodeInventory(NodeName("node-a"), (CHIP,), HostFiles())
SHARE_ID = "0f3c6a2e-1d5b-4c7a-9e8f-2a1b3c4d5e6f"


def held(*devices: tuple[str, str | None, str]) -> Checkpoint:
    """One claim per (device, shareID, CDI name's share terms)."""
    checkpoint = Checkpoint()
    for index, (device, share_id, terms) in enumerate(devices):
        uid = ClaimUID(f"c{index}")
        name = f"{uid}-{device}{'-' + share_id if share_id else ''}{terms}"
        prepared = PreparedDevice(
            (), PoolName("node-a"), DeviceName(device), (f"k8s.npu.huawei.com/npu={name}",),
            share_id=share_id,
        )  # fmt: skip
        ref = ClaimRef(Namespace("ns"), ClaimName(f"claim-{index}"), uid)
        checkpoint = checkpoint.with_claim(PreparedClaim(ref, (prepared,)))
    return checkpoint


def forms(policy: SharingPolicy, checkpoint: Checkpoint) -> dict[DeviceName, ChipForm]:
    return held_forms(policy, INVENTORY, checkpoint.sharers(), checkpoint.holders())


QUARTERS = held(("npu-0-share-0", None, "-mem8192-aic5"), ("npu-0-share-3", None, "-mem8192-aic5"))


def test_fixed_shares_held_keep_their_count_whatever_the_flags_and_the_server_say() -> None:
    assert forms(SharingPolicy(shares=4), QUARTERS) == {}  # the flags' form: nothing to hold
    assert forms(SharingPolicy(shares=8), QUARTERS) == {NPU_0: ChipForm(FIXED, 4)}
    assert forms(SharingPolicy(shares=4, consumable=True), QUARTERS) == {NPU_0: ChipForm(FIXED, 4)}


def test_consumable_shares_held_are_withheld_where_the_server_no_longer_serves_them() -> None:
    consumable = held(("npu-0", SHARE_ID, "-mem16384"))
    assert forms(SharingPolicy(consumable=True), consumable) == {}
    assert forms(SharingPolicy(consumable=False), consumable) == {NPU_0: ChipForm(WITHHELD)}


def test_shares_of_a_chip_no_longer_named_or_in_both_forms_withhold_it() -> None:
    unnamed = SharingPolicy(chips=frozenset({DeviceName("npu-1")}))
    assert forms(unnamed, QUARTERS) == {NPU_0: ChipForm(WITHHELD)}
    both = held(("npu-0-share-0", None, "-mem8192-aic5"), ("npu-0", SHARE_ID, "-mem8192"))
    assert forms(SharingPolicy(consumable=True), both) == {NPU_0: ChipForm(WITHHELD)}
    mixed = held(("npu-0-share-0", None, "-mem8192-aic5"), ("npu-0-share-1", None, "-mem4096-aic2"))
    assert forms(SharingPolicy(shares=4), mixed) == {NPU_0: ChipForm(WITHHELD)}


def test_a_chip_held_whole_stays_whole_once_the_flags_share_it() -> None:
    whole = held(("npu-0", None, ""))
    assert forms(SharingPolicy(shares=4), whole) == {NPU_0: ChipForm(WHOLE)}
    assert forms(SharingPolicy(chips=frozenset()), whole) == {}  # not shared: whole anyway
