"""Contract suites a new backend proves itself with, shipped in the package (needs pytest).

`python -m npu_dra.contract MODULE:FACTORY` runs the hardware contract over your adapter.
"""

from npu_dra.contract.hardware import HardwareBackend, HardwareContract, load_backend

__all__ = ["HardwareBackend", "HardwareContract", "load_backend"]
