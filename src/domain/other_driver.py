"""Another DRA driver of the same name on this node: Huawei's own Ascend DRA driver is also named
npu.huawei.com (domain/huawei_names.py). Its slices in this node's pool are recognised, and the
pool is left to it rather than fought over."""

from collections.abc import Iterable, Sequence

from npu_dra.domain.attributes import qualify
from npu_dra.domain.errors import DomainError
from npu_dra.domain.huawei_names import DEVICE_TYPE, PHYSIC_ID
from npu_dra.domain.pool import ResourceSlice


class OtherDriverPublishes(DomainError):
    """Another driver of this driver's name publishes in this node's pool."""


# Every version of npu-dra published one of these on every device (chipName or productName
# from the first; type since one DeviceClass per kind), under the driver's own domain; Huawei's
# driver publishes these two alone (domain/huawei_names.py).
_NPU_DRA_MARKS = frozenset({"type", "chipName", "productName"})
_HUAWEI_MARKS = frozenset({DEVICE_TYPE, PHYSIC_ID})


def others_devices(slices: Iterable[ResourceSlice], driver: str) -> list[str]:
    """Devices in this node's pool that Huawei's driver wrote: its attributes and none of ours.
    Anything else in the pool that npu-dra did not write (a slice planted by someone with a
    stolen token, say) is not a driver's to leave alone: the pool sync replaces it."""
    return [
        d.name
        for s in slices
        for d in s.devices
        if _names(d.attributes, driver) & _HUAWEI_MARKS
        and not _names(d.attributes, driver) & _NPU_DRA_MARKS
    ]


def _names(attributes: Iterable[str], driver: str) -> frozenset[str]:
    """The attribute names under the driver's own domain."""
    return frozenset(i for d, i in (qualify(n, driver) for n in attributes) if d == driver)


def other_driver_publishes(
    node: str, driver: str, slices: Sequence[ResourceSlice]
) -> OtherDriverPublishes:
    """Why the pool is left alone while another driver's slices are in it."""
    names = others_devices(slices, driver)
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return OtherDriverPublishes(
        f"another DRA driver named {driver} publishes in node {node}'s pool (devices {shown}, "
        "which carry Huawei's own Ascend DRA driver's deviceType and physicId and none of "
        "npu-dra's attributes). Two drivers of one name would fight over the pool and the "
        "kubelet's registration, so npu-dra publishes nothing here until those slices are gone: "
        "remove the other driver from this node (the kubelet then deletes its slices) "
        "(docs/migrating-from-huawei-dra.md)"
    )
