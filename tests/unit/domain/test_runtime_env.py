"""The env an Ascend container's software reads to know its devices, for every kind of allocation.

The rule (domain/profile.py, with its sources): ASCEND_VISIBLE_DEVICES lists the host's ids
(physical ids; vNPU ids for vNPUs) in ascending order, the order in which the driver numbers a
container's devices 0..N-1; ASCEND_RT_VISIBLE_DEVICES filters those container numbers, so it is
left unset by default and, with `--runtime-visible-devices=container`, set to 0..N-1; never to
host ids. The device nodes keep the host's numbers (/dev/davinci3 stays /dev/davinci3).
"""

import pytest

from npu_dra.domain.cdi import claim_cdi_spec
from npu_dra.domain.device import Device, HostFiles, NodeInventory
from npu_dra.domain.device_plugin_allocation import AllocateSettings, container_allocation
from npu_dra.domain.ids import ClaimUID, DeviceName, DriverName, NodeName, PoolName
from npu_dra.domain.prepare import NodeContext
from npu_dra.domain.prepare_vnpu import Handed, vnpu_cdi_spec
from npu_dra.domain.profile import (
    ASCEND_NPU,
    NVIDIA_GPU,
    RUNTIME_IDS,
    RUNTIME_IDS_CONTAINER,
    RUNTIME_IDS_UNSET,
    DeviceProfile,
    with_runtime_ids,
)
from npu_dra.domain.vnpu.instance import VnpuRecord

UID = ClaimUID("c937b261-3809-5c37-bb79-242dfdf6b5d2")
DRIVER = DriverName("npu.huawei.com")
HOST = HostFiles(device_nodes=frozenset({"davinci_manager", "devmm_svm", "hisi_hdc"}))
CONTAINER = with_runtime_ids(ASCEND_NPU, RUNTIME_IDS_CONTAINER)


def chip(physical_id: int) -> Device:
    # logic id deliberately differs from the physical id: the env must not use the host's
    # logic id either (a container numbers its own chips).
    return Device(
        DeviceName(f"npu-{physical_id}"),
        physical_id,
        7 - physical_id,
        physical_id,
        0,
        "910B4",
        32 << 30,
    )


CHIPS = {n: chip(n) for n in range(8)}


def dra_env(ids: list[int], profile: DeviceProfile = ASCEND_NPU) -> dict[str, str]:
    spec = claim_cdi_spec(UID, [CHIPS[n] for n in ids], driver=DRIVER, profile=profile, host=HOST)
    return dict(e.split("=", 1) for e in spec.edits.env)


def dra_nodes(ids: list[int]) -> list[str]:
    spec = claim_cdi_spec(UID, [CHIPS[n] for n in ids], driver=DRIVER, profile=CONTAINER, host=HOST)
    return [n.path for d in spec.devices for n in d.edits.device_nodes]


def classic_env(ids: list[str], profile: DeviceProfile = ASCEND_NPU) -> dict[str, str]:
    allocation = container_allocation(CHIPS.values(), ids, AllocateSettings(profile, host=HOST))
    return dict(allocation.envs)


def test_a_whole_chip_gets_its_physical_id_and_no_runtime_filter_by_default() -> None:
    assert dra_env([3]) == {"ASCEND_VISIBLE_DEVICES": "3"}
    assert dra_env([3], CONTAINER) == {
        "ASCEND_VISIBLE_DEVICES": "3",
        "ASCEND_RT_VISIBLE_DEVICES": "0",
    }


@pytest.mark.parametrize("order", [[3, 4], [4, 3]])
def test_several_chips_in_any_order_are_listed_ascending_and_numbered_from_zero(
    order: list[int],
) -> None:
    assert dra_env(order) == {"ASCEND_VISIBLE_DEVICES": "3,4"}
    assert dra_env(order, CONTAINER) == {
        "ASCEND_VISIBLE_DEVICES": "3,4",
        "ASCEND_RT_VISIBLE_DEVICES": "0,1",
    }
    # The nodes keep the host's numbers; the container's 0 is davinci3, its 1 davinci4.
    assert dra_nodes(order) == ["/dev/davinci3", "/dev/davinci4"]


def test_scattered_chips_are_numbered_densely_never_with_host_ids() -> None:
    env = dra_env([7, 0, 5], CONTAINER)
    assert env == {"ASCEND_VISIBLE_DEVICES": "0,5,7", "ASCEND_RT_VISIBLE_DEVICES": "0,1,2"}


@pytest.mark.parametrize("ids", [["npu-4", "npu-3"], ["npu-3", "npu-4"]])
def test_the_classic_plugin_answers_allocate_with_the_same_env(ids: list[str]) -> None:
    assert classic_env(ids) == {"ASCEND_VISIBLE_DEVICES": "3,4"}
    assert classic_env(ids, CONTAINER) == {
        "ASCEND_VISIBLE_DEVICES": "3,4",
        "ASCEND_RT_VISIBLE_DEVICES": "0,1",
    }


def vnpu_env(handed: list[Handed], profile: DeviceProfile = ASCEND_NPU) -> dict[str, str]:
    node = NodeContext(
        DRIVER,
        PoolName("node-a"),
        NodeInventory(NodeName("node-a"), tuple(CHIPS.values()), HOST),
        profile,
    )
    spec = vnpu_cdi_spec(UID, handed, node)
    return dict(e.split("=", 1) for e in spec.edits.env)


def vnpu(physical_id: int, vnpu_id: int) -> Handed:
    name = DeviceName(f"npu-{physical_id}-vnpu-0")
    return Handed(name, CHIPS[physical_id], VnpuRecord(vnpu_id, CHIPS[physical_id].name, "vir10"))


def test_a_vnpu_is_its_vnpu_id_on_the_host_and_zero_in_the_container() -> None:
    assert vnpu_env([vnpu(3, 148)]) == {"ASCEND_VISIBLE_DEVICES": "148"}
    assert vnpu_env([vnpu(3, 148)], CONTAINER) == {
        "ASCEND_VISIBLE_DEVICES": "148",
        "ASCEND_RT_VISIBLE_DEVICES": "0",
    }


def test_vnpus_and_a_whole_chip_together_are_numbered_in_node_order() -> None:
    handed = [vnpu(4, 164), Handed(DeviceName("npu-3"), CHIPS[3]), vnpu(3, 148)]
    assert vnpu_env(handed, CONTAINER) == {
        "ASCEND_VISIBLE_DEVICES": "3,148,164",
        "ASCEND_RT_VISIBLE_DEVICES": "0,1,2",
    }


def test_a_profile_without_a_runtime_filter_never_gets_one() -> None:
    gpu = with_runtime_ids(NVIDIA_GPU, RUNTIME_IDS_CONTAINER)
    assert gpu.visible_env(["GPU-a", "GPU-b"]) == ("NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b",)


def test_the_default_is_unset_and_an_unknown_mode_names_the_flag() -> None:
    assert ASCEND_NPU.runtime_ids == RUNTIME_IDS_UNSET
    assert set(RUNTIME_IDS) == {"unset", "container"}
    with pytest.raises(ValueError, match="--runtime-visible-devices 'host'"):
        with_runtime_ids(ASCEND_NPU, "host")


def test_the_flag_offers_exactly_these_modes_and_the_wiring_applies_one() -> None:
    from npu_dra.app.options.kubelet import RUNTIME_VISIBLE_DEVICES, RUNTIME_VISIBLE_DEVICES_MODES
    from npu_dra.domain.profile import node_profile

    assert RUNTIME_VISIBLE_DEVICES_MODES == RUNTIME_IDS
    assert RUNTIME_VISIBLE_DEVICES.default == RUNTIME_IDS_UNSET
    assert node_profile("npu", "container").visible_env(["3", "4"]) == (
        "ASCEND_VISIBLE_DEVICES=3,4",
        "ASCEND_RT_VISIBLE_DEVICES=0,1",
    )
