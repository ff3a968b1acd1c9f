"""GPUs and the sharing mode: there is none to set.

Several containers may open one NVIDIA GPU's node and run on it by time-slicing under the
default compute mode (NVIDIA's own DRA driver and device plugin share GPUs this way, with no
mode change). An operator who set a GPU to exclusive-process compute mode has chosen otherwise;
npu-dra reads no compute mode and changes none.
"""

from npu_dra.domain.device import Device


class TimeSlicedGpus:
    def enable_device_share(self, *, device: Device) -> bool:
        return False  # nothing to turn on: time-slicing is what a GPU does unasked
