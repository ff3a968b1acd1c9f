"""Contract-suite options: `--hardware-backend=package.module:factory` runs the hardware
contract against a vendor's own HardwareProbe instead of the built-in adapters.
"""

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--hardware-backend",
        action="append",
        default=[],
        metavar="MODULE:FACTORY",
        help=(
            "run the hardware contract against FACTORY from MODULE (repeatable); FACTORY() "
            "returns a HardwareProbe or an npu_dra.contract.HardwareBackend"
        ),
    )
