"""DcmiSharingMode: a chip's container-sharing mode through libdcmi.so (adapters/hardware/
device_share.py says why and which chips).

`dcmi_get_device_share_enable(card, chip, &flag)` says whether it is on; only where it is off
is `dcmi_set_device_share_enable(card, chip, 1)` called: the calls npu-smi's own `device-share`
makes (Huawei's DCMI API reference, verylucky01/driver @ e29d066f, docs/en/Ascend_910B_DCMI_API;
npu-smi's src/custom/dev_prod/user/npucli/src/npu_chip_info.c). Only root on the host or in a
privileged container may set it (-8002 otherwise); a chip without the mode answers -8255:
SharingModeUnsupported.
"""

import ctypes

from npu_dra.adapters.hardware.dcmi import library
from npu_dra.adapters.hardware.sharing_mode import SharingModeUnsupported
from npu_dra.domain.device import Device

ON = 1


class DcmiSharingMode:
    def __init__(self, *, dcmi: ctypes.CDLL) -> None:
        self._lib = dcmi

    def enable_device_share(self, *, device: Device) -> bool:
        flag = ctypes.c_int(0)
        code = self._lib.dcmi_get_device_share_enable(
            device.card_id, device.chip_id, ctypes.byref(flag)
        )
        self._check(device, "dcmi_get_device_share_enable", code)
        if flag.value == ON:
            return False
        code = self._lib.dcmi_set_device_share_enable(device.card_id, device.chip_id, ON)
        self._check(device, "dcmi_set_device_share_enable", code)
        return True

    @staticmethod
    def _check(device: Device, call: str, code: int) -> None:
        named = f"{call}({device.name})"
        if code == library.NOT_SUPPORTED:
            raise SharingModeUnsupported(device, str(library.DcmiError(named, code)))
        library.check(named, code)
