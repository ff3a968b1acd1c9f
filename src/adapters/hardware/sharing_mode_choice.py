"""Which adapter turns a chip's container-sharing mode on (`SharingMode`), for the backend
`--hardware` chose: fake hardware's own, nothing for GPUs, DCMI where chips are probed through it
and the library has the calls, npu-smi otherwise (as vNPUs choose: dcmi/vnpu_choice.py)."""

from pathlib import Path

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.npu_smi.sharing_mode import NpuSmiSharingMode
from npu_dra.adapters.hardware.nvml.probe import NvmlProbe
from npu_dra.adapters.hardware.nvml.sharing_mode import TimeSlicedGpus
from npu_dra.domain.ports import HardwareProbe, SharingMode


def device_share_for(
    kind: str, probe: HardwareProbe, npu_smi: Path, *, timeout: float = 10.0
) -> SharingMode:
    """`kind` is --hardware's choice, `probe` what it built; npu-smi's commands wait `timeout`
    seconds at most (--probe-timeout)."""
    if isinstance(probe, FakeHardware):
        return probe.device_share()
    if isinstance(probe, NvmlProbe) or kind == "nvml":
        return TimeSlicedGpus()
    if kind in ("dcmi", "auto"):
        from npu_dra.adapters.hardware.dcmi.device_share_choice import dcmi_device_share

        if (through_dcmi := dcmi_device_share(probe)) is not None:
            return through_dcmi
    return NpuSmiSharingMode(npu_smi=npu_smi, timeout=timeout)
