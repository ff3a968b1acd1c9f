"""A stand-in for nvidia-ml-py's `pynvml` that answers from an NVML dump recorded on a real GPU.

Put this directory first on PYTHONPATH (or swap the module in a test) to run the real
PynvmlLibrary, discover and the contract without a GPU. $FAKE_PYNVML_DUMP names the dump
(default: the recorded H100); $FAKE_PYNVML_XIDS queues XID events ("0:79,0:13": GPU index:XID);
XIDS can be appended to by tests. Only the calls PynvmlLibrary makes exist.
"""

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

DUMP = Path(
    os.environ.get("FAKE_PYNVML_DUMP")
    or Path(__file__).resolve().parents[3] / "fixtures" / "nvml" / "nvml-dump_H100.json"
)
# The values of the real module (nvidia-ml-py 13.x) for the constants PynvmlLibrary reads.
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_UNKNOWN = 999
nvmlEventTypeXidCriticalError = 8
NVML_BRAND_UNKNOWN, NVML_BRAND_TESLA, NVML_BRAND_NVIDIA, NVML_BRAND_GEFORCE_RTX = 0, 2, 14, 15
NVML_DEVICE_ARCH_AMPERE, NVML_DEVICE_ARCH_ADA, NVML_DEVICE_ARCH_HOPPER = 7, 8, 9
_ERRORS = {"Not Supported": NVML_ERROR_NOT_SUPPORTED, "Timeout": NVML_ERROR_TIMEOUT}

XIDS: list[tuple[int, int]] = [
    (int(gpu), int(xid))
    for gpu, _, xid in (e.partition(":") for e in os.environ.get("FAKE_PYNVML_XIDS", "").split(","))
    if xid
]
_state: dict[str, Any] = {"dump": None}


class NVMLError(Exception):
    def __init__(self, value: int, text: str = "") -> None:
        super().__init__(text or f"NVML error {value}")
        self.value = value


def nvmlInit() -> None:
    _state["dump"] = json.loads(DUMP.read_text())


def _dump() -> dict[str, Any]:
    if _state["dump"] is None:
        raise NVMLError(1, "Uninitialized")
    dump: dict[str, Any] = _state["dump"]
    return dump


def _answer(handle: dict[str, Any], key: str) -> Any:
    value = handle[key]
    if isinstance(value, dict) and "nvml_error" in value:
        text = value["nvml_error"]
        raise NVMLError(_ERRORS.get(text, NVML_ERROR_UNKNOWN), text)
    return value


def nvmlSystemGetDriverVersion() -> str:
    return str(_dump()["driver_version"])


def nvmlSystemGetCudaDriverVersion() -> int:
    return int(_dump()["cuda_driver_version"])


def nvmlDeviceGetCount() -> int:
    return len(_dump()["devices"])


def nvmlDeviceGetHandleByIndex(index: int) -> dict[str, Any]:
    devices: list[dict[str, Any]] = _dump()["devices"]
    return devices[index]


def nvmlDeviceGetUUID(handle: dict[str, Any]) -> str:
    return str(_answer(handle, "uuid"))


def nvmlDeviceGetName(handle: dict[str, Any]) -> str:
    return str(_answer(handle, "name"))


def nvmlDeviceGetMinorNumber(handle: dict[str, Any]) -> int:
    return int(_answer(handle, "minor_number"))


def nvmlDeviceGetMemoryInfo(handle: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(total=int(_answer(handle, "memory_total")))


def nvmlDeviceGetPciInfo(handle: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(busId=str(_answer(handle, "pci_bus_id")).encode())


def nvmlDeviceGetCudaComputeCapability(handle: dict[str, Any]) -> tuple[int, int]:
    major, minor = _answer(handle, "cuda_compute_capability")
    return int(major), int(minor)


def nvmlDeviceGetBrand(handle: dict[str, Any]) -> int:
    return int(_answer(handle, "brand"))


def nvmlDeviceGetArchitecture(handle: dict[str, Any]) -> int:
    return int(_answer(handle, "architecture"))


def nvmlDeviceGetMigMode(handle: dict[str, Any]) -> tuple[int, int]:
    current, pending = _answer(handle, "mig_mode")
    return int(current), int(pending)


def nvmlDeviceGetNumaNodeId(handle: dict[str, Any]) -> int:
    return int(_answer(handle, "numa_node"))


def nvmlEventSetCreate() -> object:
    _dump()
    return object()


def nvmlDeviceRegisterEvents(handle: dict[str, Any], types: int, events: object) -> None:
    _dump()


def nvmlEventSetWait(events: object, timeout_ms: int) -> SimpleNamespace:
    if not XIDS:
        raise NVMLError(NVML_ERROR_TIMEOUT, "Timeout")
    index, xid = XIDS.pop(0)
    return SimpleNamespace(
        eventType=nvmlEventTypeXidCriticalError,
        device=nvmlDeviceGetHandleByIndex(index),
        eventData=xid,
    )
