"""ctypes mirrors of the DCMI structures npu-dra reads.

Layouts from Huawei's public header, github.com/Ascend/mind-cluster
component/ascend-common/devmanager/dcmi/dcmi_interface_api.h (declared again here, not copied);
tests/unit/dcmi/test_struct_layout.py checks each size and field offset against the C
declarations of tests/support/dcmi_stub/dcmi_stub.h compiled by the system compiler.
"""

import ctypes

CHIP_NAME_LEN = 32  # MAX_CHIP_NAME_LEN in the header


class ChipInfo(ctypes.Structure):
    """struct dcmi_chip_info: chip type ("Ascend"), name ("910B4"), version, AI core count."""

    _fields_ = (
        ("chip_type", ctypes.c_ubyte * CHIP_NAME_LEN),
        ("chip_name", ctypes.c_ubyte * CHIP_NAME_LEN),
        ("chip_ver", ctypes.c_ubyte * CHIP_NAME_LEN),
        ("aicore_cnt", ctypes.c_uint),
    )


class PcieInfoAll(ctypes.Structure):
    """struct dcmi_pcie_info_all (64 bytes, as the header's comment says)."""

    _fields_ = (
        ("venderid", ctypes.c_uint),
        ("subvenderid", ctypes.c_uint),
        ("deviceid", ctypes.c_uint),
        ("subdeviceid", ctypes.c_uint),
        ("domain", ctypes.c_int),
        ("bdf_busid", ctypes.c_uint),
        ("bdf_deviceid", ctypes.c_uint),
        ("bdf_funcid", ctypes.c_uint),
        ("reserve", ctypes.c_ubyte * 32),
    )


class HbmInfo(ctypes.Structure):
    """struct dcmi_hbm_info: memory_size in MB (Ascend 910 family only)."""

    _fields_ = (
        ("memory_size", ctypes.c_ulonglong),
        ("freq", ctypes.c_uint),
        ("memory_usage", ctypes.c_ulonglong),
        ("temp", ctypes.c_int),
        ("bandwith_util_rate", ctypes.c_uint),
    )


class MemoryInfo(ctypes.Structure):
    """struct dcmi_get_memory_info_stru (96 bytes, as the header's comment says): size in MB."""

    _fields_ = (
        ("memory_size", ctypes.c_ulonglong),
        ("memory_available", ctypes.c_ulonglong),
        ("freq", ctypes.c_uint),
        ("hugepagesize", ctypes.c_ulong),
        ("hugepages_total", ctypes.c_ulong),
        ("hugepages_free", ctypes.c_ulong),
        ("utiliza", ctypes.c_uint),
        ("reserve", ctypes.c_ubyte * 60),
    )


class BoardInfo(ctypes.Structure):
    """struct dcmi_board_info: board, PCB and BOM ids and the chip's PCIe slot."""

    _fields_ = (
        ("board_id", ctypes.c_uint),
        ("pcb_id", ctypes.c_uint),
        ("bom_id", ctypes.c_uint),
        ("slot_id", ctypes.c_uint),
    )


STRUCTS: dict[str, type[ctypes.Structure]] = {
    "dcmi_chip_info": ChipInfo,
    "dcmi_pcie_info_all": PcieInfoAll,
    "dcmi_hbm_info": HbmInfo,
    "dcmi_get_memory_info_stru": MemoryInfo,
    "dcmi_board_info": BoardInfo,
}


def text(field: "ctypes.Array[ctypes.c_ubyte]") -> str:
    """A NUL-terminated fixed-size char array as text (undecodable bytes shown escaped)."""
    raw = bytes(field).split(b"\0", 1)[0]
    return raw.decode("ascii", errors="backslashreplace")
