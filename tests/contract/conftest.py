"""Contract-suite options: `--hardware-backend=package.module:factory` runs the hardware
contract against a vendor's own HardwareProbe instead of the built-in adapters.

The tests folder is put on sys.path so suites can share `support/` helpers.
"""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


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
