"""NvmlProbe: the HardwareProbe adapter for NVIDIA GPUs.

Each probe reads every GPU through the NVML seam and drains the XID events since the last one;
a GPU that had a critical XID stays Unhealthy for the life of the probe (as in NVIDIA's device
plugin: only a restart, after the operator's fix, clears it). MIG mode is read, never changed.
Any NVML failure raises ProbeError; a partial GPU list is never returned.
"""

import attrs

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.adapters.hardware.nvml.library import GpuFacts, NvmlError, NvmlLibrary, SystemFacts
from npu_dra.adapters.hardware.nvml.xid import health_after
from npu_dra.domain.attributes import Version
from npu_dra.domain.device import Device, Health, HostFiles, NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DeviceName, NodeName
from npu_dra.domain.profile import NVIDIA_GPU


class NvmlProbe:
    def __init__(
        self,
        *,
        node: NodeName,
        library: NvmlLibrary,
        host: NvidiaHostPaths | None = None,
        shared_nodes: frozenset[str] | None = None,  # fake hardware: say, do not look
    ) -> None:
        self._node = node
        self._library = library
        self._host = host
        self._shared_nodes = shared_nodes
        self._unhealthy: set[str] = set()

    def probe(self) -> NodeInventory:
        try:
            system = self._library.system()
            gpus = self._library.gpus()
            for uuid, xid in self._library.critical_xids():
                if health_after(xid) is Health.UNHEALTHY:
                    self._unhealthy.add(uuid)
        except NvmlError as error:
            raise ProbeError(f"NVML: {error}") from error
        try:
            devices = tuple(self._device(gpu, system) for gpu in gpus)
            return NodeInventory(self._node, devices, self._host_files())
        except (DomainError, ValueError) as error:
            raise ProbeError(f"NVML describes an impossible node: {error}") from error

    def _host_files(self) -> HostFiles:
        if self._host is None:
            return HostFiles(device_nodes=self._shared_nodes or frozenset())
        return self._host.host_files(shared_nodes=self._shared_nodes)

    def _device(self, gpu: GpuFacts, system: SystemFacts) -> Device:
        if gpu.memory_bytes <= 0:
            raise ValueError(f"GPU {gpu.index} ({gpu.uuid}) reports {gpu.memory_bytes} bytes")
        major, minor = gpu.compute_capability
        properties: dict[str, bool | int | str | Version] = {
            "cudaComputeCapability": Version(f"{major}.{minor}.0"),
            "driverVersion": _version(system.driver_version),
            "cudaDriverVersion": _cuda_version(system.cuda_driver_version),
            "migEnabled": gpu.mig_enabled,
        }
        if gpu.brand:
            properties["brand"] = gpu.brand
        if gpu.architecture:
            properties["architecture"] = gpu.architecture
        device = Device(
            name=DeviceName("gpu-0"),  # replaced below by the profile's name
            physical_id=gpu.minor,
            logic_id=gpu.index,
            card_id=gpu.index,
            chip_id=0,
            chip_name=gpu.name,
            memory_bytes=gpu.memory_bytes,
            health=Health.UNHEALTHY if gpu.uuid in self._unhealthy else Health.HEALTHY,
            numa_node=gpu.numa_node,
            pci_bus_id=_pci_bus_id(gpu.pci_bus_id),
            profile=NVIDIA_GPU.name,
            uuid=gpu.uuid,
            properties=tuple(sorted(properties.items())),
        )
        return attrs.evolve(device, name=DeviceName(NVIDIA_GPU.device_name(device)))


def _pci_bus_id(nvml: str) -> str:
    """NVML's 8-hex-digit domain to the kernel's 4 (00000000:00:06.0 -> 0000:00:06.0)."""
    domain, _, rest = nvml.partition(":")
    return f"{domain[-4:]}:{rest}".lower()


def _version(text: str) -> Version:
    """A driver version as a strict semver: 580.159.04 -> 580.159.4, 550.54 -> 550.54.0."""
    parts = [str(int(p)) for p in text.split(".")[:3]]
    return Version(".".join(parts + ["0"] * (3 - len(parts))))


def _cuda_version(value: int) -> Version:
    """NVML's 13000 -> 13.0.0, 12040 -> 12.4.0."""
    return Version(f"{value // 1000}.{value % 1000 // 10}.0")
