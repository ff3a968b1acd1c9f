"""The seam between the NVML probe and NVML: what the probe asks, answered as plain values.

The real implementation wraps `pynvml`; the fake replays recorded `nvidia-smi -q -x` output.
Both raise NvmlError for anything NVML would refuse, so the probe can turn it into a ProbeError.
"""

from typing import Protocol

import attrs


class NvmlError(Exception):
    """An NVML call failed (library missing, driver not loaded, GPU lost)."""


@attrs.frozen
class GpuFacts:
    """One GPU as NVML reports it."""

    index: int
    uuid: str
    name: str
    minor: int  # N of /dev/nvidiaN
    memory_bytes: int
    pci_bus_id: str  # NVML's 8-digit-domain form, 00000000:00:06.0
    compute_capability: tuple[int, int]
    brand: str | None = None
    architecture: str | None = None
    mig_enabled: bool = False
    numa_node: int | None = None  # None: NVML does not know (Not Supported)


@attrs.frozen
class SystemFacts:
    driver_version: str  # 580.159.04
    cuda_driver_version: int  # 13000 -> 13.0


class NvmlLibrary(Protocol):
    def system(self) -> SystemFacts: ...

    def gpus(self) -> tuple[GpuFacts, ...]:
        """Every GPU; NvmlError if any one cannot be read (never a shorter list)."""
        ...

    def critical_xids(self) -> tuple[tuple[str, int], ...]:
        """(GPU uuid, XID) of the XID events since the last call; never blocks."""
        ...
