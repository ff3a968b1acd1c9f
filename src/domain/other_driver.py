"""Another DRA driver of the same name on this node: Huawei's own Ascend DRA driver is also named
npu.huawei.com (domain/huawei_names.py). Its slices in this node's pool are recognised, and the
pool is left to it rather than fought over."""

from collections.abc import Iterable, Sequence

from npu_dra.domain.attributes import qualify
from npu_dra.domain.errors import DomainError
from npu_dra.domain.pool import ResourceSlice


class OtherDriverPublishes(DomainError):
    """Another driver of this driver's name publishes in this node's pool."""


# Every version of npu-dra published one of these on every device (chipName or productName
# from the first; type since one DeviceClass per kind), under the driver's own domain.
_NPU_DRA_MARKS = frozenset({"type", "chipName", "productName"})


def others_devices(slices: Iterable[ResourceSlice], driver: str) -> list[str]:
    """Devices in this node's pool that no npu-dra wrote: another driver of the same name
    (Huawei's, above) publishes here."""
    return [d.name for s in slices for d in s.devices if not _marked(d.attributes, driver)]


def _marked(attributes: Iterable[str], driver: str) -> bool:
    return any(
        qualify(n, driver) in {(driver, mark) for mark in _NPU_DRA_MARKS} for n in attributes
    )


def other_driver_publishes(
    node: str, driver: str, slices: Sequence[ResourceSlice]
) -> OtherDriverPublishes:
    """Why the pool is left alone while another driver's slices are in it."""
    names = others_devices(slices, driver)
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return OtherDriverPublishes(
        f"another DRA driver named {driver} publishes in node {node}'s pool (devices {shown}, "
        "which npu-dra did not write: Huawei's own Ascend DRA driver gives its devices only "
        "deviceType and physicId). Two drivers of one name would fight over the pool and the "
        "kubelet's registration, so npu-dra publishes nothing here until those slices are gone: "
        "remove the other driver from this node (the kubelet then deletes its slices) "
        "(docs/migrating-from-huawei-dra.md)"
    )
