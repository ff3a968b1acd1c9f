"""ctypes mirrors of the DCMI structures the vNPU calls take and answer.

Layouts from Huawei's public header, github.com/Ascend/mind-cluster
component/ascend-common/devmanager/dcmi/dcmi_interface_api.h (dcmi_create_vdev_res_stru,
dcmi_create_vdev_out, dcmi_vdev_query_stru, dcmi_soc_total_resource and the resources they hold;
TEMPLATE_NAME_LEN 32, DCMI_VDEV_RES_NAME_LEN 16, DCMI_VDEV_FOR_RESERVE 32, DCMI_VDEV_SIZE 20,
DCMI_SOC_SPLIT_MAX 32), declared again here; the query commands (DCMI_MAIN_CMD_VDEV_MNG = 52 with
sub-commands 0 "vdev resource" and 1 "total resource") from dcmi/constants.go. The layout test
(tests/unit/dcmi/test_struct_layout.py) checks each against the C declarations.
"""

import ctypes

TEMPLATE_NAME_LEN = 32
VDEV_RES_NAME_LEN = 16
VDEV_FOR_RESERVE = 32
VDEV_SIZE = 20
SOC_SPLIT_MAX = 32
MAIN_CMD_VDEV_MNG = 52
SUB_CMD_VDEV_RESOURCE = 0
SUB_CMD_TOTAL_RESOURCE = 1
_U8, _U16, _U32, _U64 = ctypes.c_ubyte, ctypes.c_ushort, ctypes.c_uint, ctypes.c_ulonglong


class BaseResource(ctypes.Structure):
    _fields_ = (
        ("token", _U64),
        ("token_max", _U64),
        ("task_timeout", _U64),
        ("vfg_id", _U32),
        ("vip_mode", _U8),
        ("reserved", _U8 * (VDEV_FOR_RESERVE - 1)),
    )


class ComputingResource(ctypes.Structure):
    _fields_ = (
        ("aic", ctypes.c_float),
        ("aiv", ctypes.c_float),
        *((name, _U16) for name in ("dsa", "rtsq", "acsq", "cdqm", "c_core", "ffts", "sdma")),
        ("pcie_dma", _U16),
        ("memory_size", _U64),
        *((name, _U32) for name in ("event_id", "notify_id", "stream_id", "model_id")),
        *(
            (name, _U16)
            for name in (
                "topic_schedule_aicpu",
                "host_ctrl_cpu",
                "host_aicpu",
                "device_aicpu",
                "topic_ctrl_cpu_slot",
            )
        ),
        ("vdev_aicore_utilization", _U32),
        ("vdev_memory_total", _U64),
        ("vdev_memory_free", _U64),
        ("reserved", _U8 * (VDEV_FOR_RESERVE - VDEV_SIZE)),
    )


class MediaResource(ctypes.Structure):
    _fields_ = (
        *((name, ctypes.c_float) for name in ("jpegd", "jpege", "vpc", "vdec", "pngd", "venc")),
        ("reserved", _U8 * VDEV_FOR_RESERVE),
    )


class CreateVdevOut(ctypes.Structure):
    _fields_ = (
        *((name, _U32) for name in ("vdev_id", "pcie_bus", "pcie_device", "pcie_func", "vfg_id")),
        ("reserved", _U8 * VDEV_FOR_RESERVE),
    )


class CreateVdevRes(ctypes.Structure):
    """What to create: the vNPU id npu-dra chose, its vgroup (0xFFFFFFFF: the driver's pick)
    and the template's name."""

    _fields_ = (
        ("vdev_id", _U32),
        ("vfg_id", _U32),
        ("template_name", ctypes.c_char * TEMPLATE_NAME_LEN),
        ("reserved", _U8 * 64),
    )


class VdevQueryInfo(ctypes.Structure):
    _fields_ = (
        ("name", ctypes.c_char * VDEV_RES_NAME_LEN),  # the template's name
        ("status", _U32),
        ("is_container_used", _U32),
        ("vfid", _U32),
        ("vfg_id", _U32),
        ("container_id", _U64),
        ("base", BaseResource),
        ("computing", ComputingResource),
        ("media", MediaResource),
    )


class VdevQuery(ctypes.Structure):
    """struct dcmi_vdev_query_stru: the vNPU id asked about, and what DCMI says of it."""

    _fields_ = (("vdev_id", _U32), ("query_info", VdevQueryInfo))


class SocTotalResource(ctypes.Structure):
    """struct dcmi_soc_total_resource: the chip's vNPU ids (at most DCMI_SOC_SPLIT_MAX)."""

    _fields_ = (
        ("vdev_num", _U32),
        ("vdev_id", _U32 * SOC_SPLIT_MAX),
        ("vfg_num", _U32),
        ("vfg_bitmap", _U32),
        ("base", BaseResource),
        ("computing", ComputingResource),
        ("media", MediaResource),
    )


VDEV_STRUCTS: dict[str, type[ctypes.Structure]] = {
    "dcmi_base_resource": BaseResource,
    "dcmi_computing_resource": ComputingResource,
    "dcmi_media_resource": MediaResource,
    "dcmi_create_vdev_out": CreateVdevOut,
    "dcmi_create_vdev_res_stru": CreateVdevRes,
    "dcmi_vdev_query_info": VdevQueryInfo,
    "dcmi_vdev_query_stru": VdevQuery,
    "dcmi_soc_total_resource": SocTotalResource,
}
