"""libdcmi.so through ctypes: where it is found, each function's signature, one error type.

Prototypes and return codes are Huawei's public ones, declared again from github.com/Ascend/
mind-cluster component/ascend-common/devmanager/dcmi/dcmi_interface_api.h (prototypes) and
dcmi/common.go (`dcmiErrMap`: -8001 bad parameter ... -8012 not ready, -8255 not supported);
the two device-share calls, which that header lacks, from Huawei's DCMI API reference
(verylucky01/driver @ e29d066f, docs/en/Ascend_910B_DCMI_API, dcmi_get|set_device_share_enable;
src/custom/include/dcmi_interface_api.h);
the limits (128 error codes, 64 cards, 32-byte affinity text) are those Huawei's device plugin
passes, from devmanager/common/constants.go and dcmi/constants.go.

Where: an explicit path (`--dcmi-library`), else `libdcmi.so` as the dynamic loader finds it
(LD_LIBRARY_PATH: the DaemonSet sets it to the driver's directories), else
/usr/local/dcmi/libdcmi.so (Huawei's install location, ascend-facts B), else ctypes.util.
"""

import ctypes
import ctypes.util
from pathlib import Path
from typing import Any

from npu_dra.adapters.hardware.dcmi.fault_structs import EventFilter, FaultHandler
from npu_dra.adapters.hardware.dcmi.network_structs import IpAddr
from npu_dra.adapters.hardware.dcmi.structs import (
    BoardInfo,
    ChipInfo,
    HbmInfo,
    MemoryInfo,
    PcieInfoAll,
)
from npu_dra.adapters.hardware.dcmi.vdev_structs import CreateVdevOut, CreateVdevRes
from npu_dra.adapters.hardware.errors import ProbeError

OK = 0
NOT_SUPPORTED = -8255
ERRORS = {
    -8001: "the input parameter is incorrect",
    -8002: "permission error",
    -8005: "internal error",
    -8012: "not ready yet",
    -8255: "device ID/function is not supported",
}
MAX_CARDS = 64
MAX_ERROR_CODES = 128
AFFINITY_BUFFER = 256  # Huawei's plugin passes 32 bytes; more room costs nothing
DEFAULT_LIBRARY = Path("/usr/local/dcmi/libdcmi.so")
_INT, _UINT, _P = ctypes.c_int, ctypes.c_uint, ctypes.POINTER
SIGNATURES: dict[str, tuple[Any, ...]] = {
    "dcmi_init": (),
    "dcmi_get_card_list": (_P(_INT), _P(_INT), _INT),
    "dcmi_get_device_num_in_card": (_INT, _P(_INT)),
    "dcmi_get_device_logic_id": (_P(_INT), _INT, _INT),
    "dcmi_get_device_phyid_from_logicid": (_UINT, _P(_UINT)),
    "dcmi_get_device_chip_info": (_INT, _INT, _P(ChipInfo)),
    "dcmi_get_device_pcie_info_v2": (_INT, _INT, _P(PcieInfoAll)),
    "dcmi_get_device_health": (_INT, _INT, _P(_UINT)),
    "dcmi_get_device_errorcode_v2": (_INT, _INT, _P(_INT), _P(_UINT), _UINT),
    "dcmi_get_device_hbm_info": (_INT, _INT, _P(HbmInfo)),
    "dcmi_get_device_memory_info_v3": (_INT, _INT, _P(MemoryInfo)),
    "dcmi_get_device_board_info": (_INT, _INT, _P(BoardInfo)),
    "dcmi_get_affinity_cpu_info_by_device_id": (_INT, _INT, ctypes.c_char_p, _P(_INT)),
}
# Typed where the library has them; a library without them still probes (vNPUs then go through
# npu-smi, health through polling).
OPTIONAL_SIGNATURES: dict[str, tuple[Any, ...]] = {
    "dcmi_create_vdevice": (_INT, _INT, _P(CreateVdevRes), _P(CreateVdevOut)),
    "dcmi_set_destroy_vdevice": (_INT, _INT, _UINT),
    "dcmi_get_device_info": (_INT, _INT, _INT, _UINT, ctypes.c_void_p, _P(_UINT)),
    "dcmi_subscribe_fault_event": (_INT, _INT, EventFilter, FaultHandler),
    "dcmi_get_device_share_enable": (_INT, _INT, _P(_INT)),
    "dcmi_set_device_share_enable": (_INT, _INT, _INT),
    # where an NPU sits on the network (network.py): its RoCE address
    "dcmi_get_device_ip": (_INT, _INT, _INT, _INT, _P(IpAddr), _P(IpAddr)),
}
VNPU_CALLS = ("dcmi_create_vdevice", "dcmi_set_destroy_vdevice", "dcmi_get_device_info")
DEVICE_SHARE_CALLS = ("dcmi_get_device_share_enable", "dcmi_set_device_share_enable")


class DcmiError(ProbeError):
    """A DCMI call answered an error code; the message names the call, the chip and the code."""

    def __init__(self, call: str, code: int) -> None:
        super().__init__(f"{call}: DCMI error {code} ({ERRORS.get(code, 'unknown error code')})")
        self.code = code


def load(path: Path | None = None) -> ctypes.CDLL:
    """The library with every function npu-dra calls typed; ProbeError naming where it looked."""
    tried = [str(path)] if path else ["libdcmi.so", str(DEFAULT_LIBRARY)]
    if path is None:
        found = ctypes.util.find_library("dcmi")
        tried += [found] if found else []
    errors = []
    for name in tried:
        try:
            return _typed(ctypes.CDLL(name))
        except (OSError, AttributeError) as error:
            errors.append(f"{name}: {error}")
    raise ProbeError(f"libdcmi.so could not be loaded ({'; '.join(errors)})")


def _typed(library: ctypes.CDLL) -> ctypes.CDLL:
    for name, arguments in SIGNATURES.items():
        function = getattr(library, name)
        function.argtypes = arguments
        function.restype = ctypes.c_int
    for name, arguments in OPTIONAL_SIGNATURES.items():
        if offers(library, name):
            function = getattr(library, name)
            function.argtypes = arguments
            function.restype = ctypes.c_int
    return library


def offers(library: ctypes.CDLL, *names: str) -> bool:
    """Whether the library exports every one of `names`."""
    try:
        for name in names:
            getattr(library, name)
    except AttributeError:
        return False
    return True


def check(call: str, code: int) -> None:
    if code != OK:
        raise DcmiError(call, code)
