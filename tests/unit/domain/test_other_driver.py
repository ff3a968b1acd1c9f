"""Which devices in this node's pool are Huawei's own driver's (domain/other_driver.py): its two
attributes and none of ours. A device with neither (a planted slice) is not a driver's: the
pool sync replaces it."""

from npu_dra.domain.ids import DeviceName, DriverName, NodeName, PoolName
from npu_dra.domain.other_driver import others_devices
from npu_dra.domain.pool import PoolRef, PublishedDevice, ResourceSlice

DRIVER = DriverName("npu.huawei.com")


def pool(*devices: PublishedDevice) -> list[ResourceSlice]:
    ref = PoolRef(PoolName("n"), 1, 1)
    return [ResourceSlice(DRIVER, NodeName("n"), ref, devices)]


def test_huaweis_devices_are_named_and_ours_and_planted_ones_are_not() -> None:
    theirs = PublishedDevice(DeviceName("npu-0"), {"deviceType": "Ascend910A5", "physicId": 0})
    qualified = PublishedDevice(DeviceName("npu-1"), {f"{DRIVER}/physicId": 1})
    ours = PublishedDevice(
        DeviceName("npu-2"), {"deviceType": "Ascend910B", "physicId": 2, "chipName": "910B4"}
    )
    older_ours = PublishedDevice(DeviceName("npu-3"), {"chipName": "910B4", "physicalId": 3})
    planted = PublishedDevice(DeviceName("npu-4"))
    found = others_devices(pool(theirs, qualified, ours, older_ours, planted), DRIVER)
    assert found == ["npu-0", "npu-1"]


def test_another_domains_attributes_do_not_count() -> None:
    elsewhere = PublishedDevice(DeviceName("npu-0"), {"example.com/physicId": 0})
    assert others_devices(pool(elsewhere), DRIVER) == []
