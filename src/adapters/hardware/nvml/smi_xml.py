"""A fake NVML: replays recorded `nvidia-smi -q -x` output, or builds GPUs from a description.

nvidia-smi reads the same NVML the real library wraps, so its XML holds what the probe asks:
uuid, product name, brand, architecture, minor number, framebuffer size, PCI bus id, MIG mode,
driver and CUDA versions. It lacks the compute capability (and the NUMA node), which come from
the NVML field dump recorded beside it where there is one, else from the architecture's. Tests
inject XID events and failures; the simulation builds a node from a few lines of description.
"""

import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from npu_dra.adapters.hardware.nvml.library import GpuFacts, NvmlError, SystemFacts
from npu_dra.domain.quantity import Quantity

# The architecture's compute capability where a recording does not say (its first product).
ARCHITECTURE_CAPABILITY = {
    "Volta": (7, 0),
    "Turing": (7, 5),
    "Ampere": (8, 0),
    "Ada Lovelace": (8, 9),
    "Hopper": (9, 0),
    "Blackwell": (10, 0),
}
MIB = 2**20


class FakeNvml:
    """An NvmlLibrary answering from values; `fail_with` makes every call raise."""

    def __init__(self, system: SystemFacts, gpus: Sequence[GpuFacts]) -> None:
        self._system = system
        self._gpus = tuple(gpus)
        self._xids: list[tuple[str, int]] = []
        self.fail_with: NvmlError | None = None
        self.broken_gpu: int | None = None  # this index cannot be read

    @classmethod
    def from_smi_xml(cls, text: str, *, dump: Mapping[str, Any] | None = None) -> "FakeNvml":
        """From `nvidia-smi -q -x` (a `#` source line first is skipped), and optionally the NVML
        field dump recorded on the same machine (compute capability, NUMA node)."""
        body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
        try:
            root = ET.fromstring(body)  # noqa: S314 - our own recorded fixtures
            system = SystemFacts(_need(root, "driver_version"), _cuda(_need(root, "cuda_version")))
            dumped = {d["uuid"]: d for d in (dump or {}).get("devices", [])}
            gpus = [_gpu(i, g, dumped) for i, g in enumerate(root.findall("gpu"))]
        except (ET.ParseError, ValueError, KeyError) as error:
            raise NvmlError(f"nvidia-smi -q -x: {error}") from error
        return cls(system, gpus)

    @classmethod
    def from_file(cls, xml: Path, dump: Path | None = None) -> "FakeNvml":
        import json

        return cls.from_smi_xml(
            xml.read_text(), dump=json.loads(dump.read_text()) if dump else None
        )

    @classmethod
    def from_description(cls, spec: Mapping[str, Any]) -> "FakeNvml":
        """`{gpu: NVIDIA H100 80GB HBM3, count: 8, memory: 80Gi, numaNodes: [...],
        computeCapability: "9.0", architecture: Hopper}`: GPUs for the simulation."""
        count = int(spec["count"])
        numa = list(spec.get("numaNodes") or [None] * count)
        if len(numa) != count:
            raise ValueError(f"numaNodes has {len(numa)} entries for {count} GPUs")
        major, _, minor = str(spec.get("computeCapability", "9.0")).partition(".")
        memory = int(Quantity.parse(str(spec.get("memory", "80Gi"))).value)
        gpus = [
            GpuFacts(
                index=i,
                uuid=f"GPU-{zlib.crc32(str(spec['gpu']).encode()):08x}-0000-4000-8000-{i:012x}",
                name=str(spec["gpu"]),
                minor=i,
                memory_bytes=memory,
                pci_bus_id=f"00000000:{0x18 + i:02X}:00.0",
                compute_capability=(int(major), int(minor or 0)),
                brand="Nvidia",
                architecture=spec.get("architecture"),
                numa_node=None if numa[i] is None else int(numa[i]),
            )
            for i in range(count)
        ]
        return cls(SystemFacts(str(spec.get("driverVersion", "580.159.04")), 13000), gpus)

    def inject_xids(self, events: Iterable[tuple[str, int]]) -> None:
        self._xids.extend(events)

    def system(self) -> SystemFacts:
        self._check()
        return self._system

    def gpus(self) -> tuple[GpuFacts, ...]:
        self._check()
        if self.broken_gpu is not None:
            raise NvmlError(f"nvmlDeviceGetHandleByIndex({self.broken_gpu}): GPU is lost")
        return self._gpus

    def critical_xids(self) -> tuple[tuple[str, int], ...]:
        self._check()
        events, self._xids = tuple(self._xids), []
        return events

    def _check(self) -> None:
        if self.fail_with is not None:
            raise self.fail_with


def _gpu(index: int, gpu: ET.Element, dumped: Mapping[str, Mapping[str, Any]]) -> GpuFacts:
    uuid = _need(gpu, "uuid")
    dump = dumped.get(uuid, {})
    architecture = gpu.findtext("product_architecture")
    capability = dump.get("cuda_compute_capability") or ARCHITECTURE_CAPABILITY.get(
        architecture or "", (0, 0)
    )
    numa = dump.get("numa_node")
    return GpuFacts(
        index=int(dump.get("index", index)),
        uuid=uuid,
        name=_need(gpu, "product_name"),
        minor=int(_need(gpu, "minor_number")),
        memory_bytes=_mib(_need(gpu, "fb_memory_usage/total")),
        pci_bus_id=_need(gpu, "pci/pci_bus_id"),
        compute_capability=(int(capability[0]), int(capability[1])),
        brand=gpu.findtext("product_brand"),
        architecture=architecture,
        mig_enabled=gpu.findtext("mig_mode/current_mig") == "Enabled",
        numa_node=numa if isinstance(numa, int) else None,
    )


def _need(element: ET.Element, path: str) -> str:
    text = element.findtext(path)
    if text is None or not text.strip() or text.strip() == "N/A":
        raise ValueError(f"<{path}> is missing or N/A")
    return text.strip()


def _mib(text: str) -> int:
    number, _, unit = text.partition(" ")
    if unit != "MiB":
        raise ValueError(f"{text!r} is not a size in MiB")
    return int(number) * MIB


def _cuda(text: str) -> int:
    """`13.0` -> 13000, NVML's form."""
    major, _, minor = text.partition(".")
    return int(major) * 1000 + int(minor or 0) * 10
