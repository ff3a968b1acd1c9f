"""DcmiVnpuTable: the vNPU capability through libdcmi.so instead of npu-smi processes.

A create is one dcmi_create_vdevice, a destroy one dcmi_set_destroy_vdevice, a listing one
dcmi_get_device_info(DCMI_MAIN_CMD_VDEV_MNG, total resource) for the chip's vNPU ids and one
(vdev resource) per vNPU for its template, vgroup and whether a container uses it: the calls and
fields Huawei's device plugin uses (mind-cluster component/ascend-common/devmanager/dcmi/dcmi.go
DcCreateVirtualDevice, DcSetDestroyVirtualDevice, DcGetDeviceTotalResource,
DcGetDeviceVDevResource; the template is the query's `name`, as devmanager.go validates it). The
vgroup is left to the driver (0xFFFFFFFF, as that plugin passes); the vNPU id is npu-dra's own
choice, as with npu-smi's `-v`, so a create survives a crash idempotently (domain/vnpu).

DCMI has no template listing: the templates and each chip's totals still come from npu-smi,
read once per process and chip (npu_smi/vnpu.py), so after start every create and destroy is
one library call. As there, a call that fails is explained by listing the chip: the vNPU
already there with that template is created, one already gone is destroyed.
"""

import ctypes

from npu_dra.adapters.hardware.dcmi import library
from npu_dra.adapters.hardware.dcmi.vdev_structs import (
    MAIN_CMD_VDEV_MNG,
    SOC_SPLIT_MAX,
    SUB_CMD_TOTAL_RESOURCE,
    SUB_CMD_VDEV_RESOURCE,
    TEMPLATE_NAME_LEN,
    CreateVdevOut,
    CreateVdevRes,
    SocTotalResource,
    VdevQuery,
)
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.lines import clipped
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.adapters.hardware.vnpu_failures import created_anyway, listed_after
from npu_dra.domain.device import Device
from npu_dra.domain.vnpu.instance import Vnpu
from npu_dra.domain.vnpu.templates import VnpuOffer

DRIVER_PICKS = 0xFFFFFFFF


class DcmiVnpuTable:
    def __init__(self, *, dcmi: ctypes.CDLL, offers: NpuSmiVnpuTable) -> None:
        self._lib = dcmi
        self._offers = offers

    def vnpu_offer(self, *, device: Device) -> VnpuOffer | None:
        return self._offers.vnpu_offer(device=device)

    def vnpus(self, *, device: Device) -> tuple[Vnpu, ...]:
        return tuple(self._query(device, vnpu_id) for vnpu_id in self._ids(device))

    def create(self, *, device: Device, template: str, vnpu_id: int) -> Vnpu:
        name = template.encode("ascii", errors="replace")
        if len(name) >= TEMPLATE_NAME_LEN:
            raise ProbeError(f"template {clipped(template)}: longer than DCMI takes")
        asked = CreateVdevRes(vdev_id=vnpu_id, vfg_id=DRIVER_PICKS, template_name=name)
        out = CreateVdevOut()
        code = self._lib.dcmi_create_vdevice(
            device.card_id, device.chip_id, ctypes.byref(asked), ctypes.byref(out)
        )
        if code == library.OK and out.vdev_id != vnpu_id:
            self.destroy(device=device, vnpu_id=out.vdev_id)
            raise ProbeError(f"DCMI created vNPU {out.vdev_id} on {device.name}, not {vnpu_id}")
        if code != library.OK:
            failure = library.DcmiError(f"dcmi_create_vdevice({device.name}, {vnpu_id})", code)
            created_anyway(failure, self._find(device, vnpu_id, failure), device, vnpu_id, template)
        return Vnpu(vnpu_id, template)

    def destroy(self, *, device: Device, vnpu_id: int) -> None:
        code = self._lib.dcmi_set_destroy_vdevice(device.card_id, device.chip_id, vnpu_id)
        if code != library.OK:
            failure = library.DcmiError(f"dcmi_set_destroy_vdevice({device.name}, {vnpu_id})", code)
            if self._find(device, vnpu_id, failure) is not None:
                raise failure

    def _ids(self, device: Device) -> list[int]:
        total = SocTotalResource()
        self._info(device, SUB_CMD_TOTAL_RESOURCE, total, "total resource")
        if total.vdev_num > SOC_SPLIT_MAX:
            raise ProbeError(
                f"DCMI lists {total.vdev_num} vNPUs on {device.name}: at most {SOC_SPLIT_MAX}"
            )
        return [int(total.vdev_id[i]) for i in range(total.vdev_num)]

    def _query(self, device: Device, vnpu_id: int) -> Vnpu:
        query = VdevQuery(vdev_id=vnpu_id)
        self._info(device, SUB_CMD_VDEV_RESOURCE, query, f"vNPU {vnpu_id}")
        info = query.query_info
        template = info.name.decode("ascii", errors="backslashreplace")
        return Vnpu(vnpu_id, template, vgroup=int(info.vfg_id), in_use=bool(info.is_container_used))

    def _info(self, device: Device, sub: int, into: ctypes.Structure, what: str) -> None:
        size = ctypes.c_uint(ctypes.sizeof(into))
        code = self._lib.dcmi_get_device_info(
            device.card_id, device.chip_id, MAIN_CMD_VDEV_MNG, sub,
            ctypes.byref(into), ctypes.byref(size),
        )  # fmt: skip
        library.check(f"dcmi_get_device_info({device.name}, {what})", code)

    def _find(self, device: Device, vnpu_id: int, failure: ProbeError) -> Vnpu | None:
        return listed_after(failure, lambda: self.vnpus(device=device), vnpu_id)
