"""Contract suites a new backend proves itself with, shipped in the package (needs pytest).

`python -m npu_dra.contract MODULE:FACTORY` runs the hardware contract over your adapter.
"""

try:
    import pytest  # noqa: F401 - the suites are pytest classes
except ImportError as error:  # pragma: no cover - only without the extra
    raise ImportError("npu_dra.contract needs pytest: pip install 'npu-dra[contract]'") from error

from npu_dra.contract.hardware import HardwareBackend, HardwareContract, load_backend

__all__ = ["HardwareBackend", "HardwareContract", "load_backend"]
