"""NvmlLibrary on the maintained NVML binding (`nvidia-ml-py`, imported as `pynvml`).

NVML is initialised once per instance and the XID event set registered then, as NVIDIA's device
plugin does; `critical_xids` polls it with a zero timeout, so a probe never waits on it. Every
NVMLError becomes an NvmlError naming the call.
"""

import ctypes
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pynvml

from npu_dra.adapters.hardware.nvml.library import GpuFacts, NvmlError, SystemFacts

T = TypeVar("T")
# nvidia-smi's words for NVML's enums, so the real backend publishes what a recording of
# `nvidia-smi -q -x` shows (<product_brand>NVIDIA</product_brand>, <product_architecture>Hopper).
_UPPER = frozenset({"NVIDIA", "RTX", "NVS", "DLA", "NPU", "VAPPS", "VPC", "VCS", "VWS"})
_SPELLED = {"GEFORCE": "GeForce", "ADA": "Ada Lovelace", "VGAMING": "vGaming"}


def nvidia_smi_word(constant: str, prefix: str) -> str:
    """NVML_BRAND_GEFORCE_RTX -> GeForce RTX, NVML_DEVICE_ARCH_ADA -> Ada Lovelace."""
    words = constant.removeprefix(prefix).split("_")
    return " ".join(w if w in _UPPER else _SPELLED.get(w, w.title()) for w in words)


def _names(prefix: str, *skip: str) -> dict[int, str]:
    return {
        getattr(pynvml, name): nvidia_smi_word(name, prefix)
        for name in sorted(dir(pynvml))
        if name.startswith(prefix) and name.removeprefix(prefix) not in skip
    }


_BRANDS = _names("NVML_BRAND_", "COUNT", "UNKNOWN")
_ARCHITECTURES = _names("NVML_DEVICE_ARCH_", "UNKNOWN")


class PynvmlLibrary:
    """`path`: the libnvidia-ml.so.1 to use (found under --driver-root), loaded by its path
    before pynvml asks the loader for it by name, which then finds it already loaded. So the
    plugin's container needs no LD_LIBRARY_PATH into the host's library directories, which
    would also put the host's libc and libssl before the image's. None: the loader's search."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._started = False
        self._events: Any = None

    def system(self) -> SystemFacts:
        self._start()
        return SystemFacts(
            driver_version=_text(
                _call("nvmlSystemGetDriverVersion", pynvml.nvmlSystemGetDriverVersion)
            ),
            cuda_driver_version=int(
                _call("nvmlSystemGetCudaDriverVersion", pynvml.nvmlSystemGetCudaDriverVersion)
            ),
        )

    def gpus(self) -> tuple[GpuFacts, ...]:
        self._start()
        count = int(_call("nvmlDeviceGetCount", pynvml.nvmlDeviceGetCount))
        return tuple(self._gpu(index) for index in range(count))

    def critical_xids(self) -> tuple[tuple[str, int], ...]:
        self._start()
        seen: list[tuple[str, int]] = []
        while self._events is not None:
            try:
                data = pynvml.nvmlEventSetWait(self._events, 0)
            except pynvml.NVMLError as error:
                if error.value == pynvml.NVML_ERROR_TIMEOUT:
                    break
                raise NvmlError(f"nvmlEventSetWait: {error}") from error
            if data.eventType == pynvml.nvmlEventTypeXidCriticalError:
                uuid = _text(_call("nvmlDeviceGetUUID", pynvml.nvmlDeviceGetUUID, data.device))
                seen.append((uuid, int(data.eventData)))
        return tuple(seen)

    def _start(self) -> None:
        if self._started:
            return
        if self._path is not None:
            try:
                ctypes.CDLL(str(self._path), mode=ctypes.RTLD_GLOBAL)
            except OSError as error:
                raise NvmlError(f"loading {self._path}: {error}") from error
        _call("nvmlInit", pynvml.nvmlInit)
        self._started = True
        self._events = _call("nvmlEventSetCreate", pynvml.nvmlEventSetCreate)
        count = int(_call("nvmlDeviceGetCount", pynvml.nvmlDeviceGetCount))
        for index in range(count):
            handle = _call("nvmlDeviceGetHandleByIndex", pynvml.nvmlDeviceGetHandleByIndex, index)
            try:  # GPUs that cannot report XIDs (some vGPUs) are still served
                pynvml.nvmlDeviceRegisterEvents(
                    handle, pynvml.nvmlEventTypeXidCriticalError, self._events
                )
            except pynvml.NVMLError:
                continue

    def _gpu(self, index: int) -> GpuFacts:
        handle = _call("nvmlDeviceGetHandleByIndex", pynvml.nvmlDeviceGetHandleByIndex, index)
        memory = _call("nvmlDeviceGetMemoryInfo", pynvml.nvmlDeviceGetMemoryInfo, handle)
        pci = _call("nvmlDeviceGetPciInfo", pynvml.nvmlDeviceGetPciInfo, handle)
        major, minor = _call(
            "nvmlDeviceGetCudaComputeCapability", pynvml.nvmlDeviceGetCudaComputeCapability, handle
        )
        return GpuFacts(
            index=index,
            uuid=_text(_call("nvmlDeviceGetUUID", pynvml.nvmlDeviceGetUUID, handle)),
            name=_text(_call("nvmlDeviceGetName", pynvml.nvmlDeviceGetName, handle)),
            minor=int(_call("nvmlDeviceGetMinorNumber", pynvml.nvmlDeviceGetMinorNumber, handle)),
            memory_bytes=int(memory.total),
            pci_bus_id=_text(pci.busId),
            compute_capability=(int(major), int(minor)),
            brand=_optional(lambda: _BRANDS.get(pynvml.nvmlDeviceGetBrand(handle))),
            architecture=_optional(
                lambda: _ARCHITECTURES.get(pynvml.nvmlDeviceGetArchitecture(handle))
            ),
            mig_enabled=bool(_optional(lambda: pynvml.nvmlDeviceGetMigMode(handle)[0])),
            numa_node=_optional(lambda: int(pynvml.nvmlDeviceGetNumaNodeId(handle))),
        )


def _call(name: str, function: Callable[..., T], *args: Any) -> T:
    try:
        return function(*args)
    except pynvml.NVMLError as error:
        raise NvmlError(f"{name}: {error}") from error


def _optional(read: Callable[[], T]) -> T | None:
    """A fact some GPUs or drivers do not report (Not Supported): None, not an error."""
    try:
        return read()
    except (pynvml.NVMLError, AttributeError):
        return None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
