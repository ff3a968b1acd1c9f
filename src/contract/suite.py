"""The hardware contract as a test module, over the backends named in $NPU_DRA_HARDWARE_BACKEND
(comma-separated MODULE:FACTORY); `python -m npu_dra.contract` points pytest at this file."""

import os

import pytest

from npu_dra.contract.hardware import HardwareBackend, HardwareContract, load_backend

BACKENDS_ENV = "NPU_DRA_HARDWARE_BACKEND"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "hardware_backend_spec" in metafunc.fixturenames:
        specs = [s for s in os.environ.get(BACKENDS_ENV, "").split(",") if s]
        metafunc.parametrize("hardware_backend_spec", specs)


@pytest.fixture
def hardware_backend(hardware_backend_spec: str) -> HardwareBackend:
    return load_backend(hardware_backend_spec)


class TestHardwareContract(HardwareContract):
    pass
