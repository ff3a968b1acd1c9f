"""`-t memory` / `-t usages`: a chip's memory where `npu-smi info` shows none."""

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_memory import parse_memory
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from tests.support.fake_npu_smi import FIXTURES

COMMAND = "npu-smi info -t memory -i 0"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("npu-smi-info-t-memory_910B-32G.txt", {0: 32768}),
        ("npu-smi-info-t-usages_910A.txt", {0: 31129}),
        ("npu-smi-info-t-usages_910B1.txt", {0: 65536}),
    ],
)
def test_recorded_replies_give_hbm_per_chip(name: str, expected: dict[int, int]) -> None:
    assert parse_memory(recorded(FIXTURES / name), command=COMMAND) == expected


def test_310p_reply_with_ddr_only_and_two_chips() -> None:
    text = (
        "\tNPU ID : 96\n\tTotal DDR Capacity(MB) : 44280\n\tDDR Clock Speed(MHz) : 3200\n"
        "\tChip ID : 0\n\n\tTotal DDR Capacity(MB) : 43693\n\tChip ID : 1\n"
    )
    assert parse_memory(text, command=COMMAND) == {0: 44280, 1: 43693}


def test_zero_capacity_and_unsupported_say_nothing() -> None:
    assert parse_memory("\tHBM Capacity(MB) : 0\n\tChip ID : 0\n", command=COMMAND) == {}
    unsupported = "This device does not support querying memory.\n"
    assert parse_memory(unsupported, command=COMMAND) == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("garbage\n", "line 1: expected `key : value`"),
        ("\tHBM Capacity(MB) : lots\n", "line 1: HBM Capacity(MB) 'lots' is not a number"),
        ("\tChip ID : 0\n\tChip ID : 0\n", "line 2: duplicate Chip ID"),
    ],
)
def test_malformed_memory_reply_is_an_error(text: str, message: str) -> None:
    with pytest.raises(ProbeError, match=f"^`{COMMAND}`") as raised:
        parse_memory(text, command=COMMAND)
    assert message in str(raised.value)
