"""`npu-smi info -m` and `-l`: the chips and cards a node has, with management rows dropped."""

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_map import Card, parse_card_list, parse_map
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from tests.support.fake_npu_smi import FIXTURES


def rows(name: str) -> list[tuple[int, int, int | None, int | None, str]]:
    chips = parse_map(recorded(FIXTURES / name))
    return [(c.card_id, c.chip_id, c.logic_id, c.physical_id, c.name) for c in chips]


def test_910b4_map_drops_the_mcu_rows() -> None:
    assert rows("npu-smi-info-m_910B4_8npu.txt") == [
        (n, 0, n, None, "Ascend 910B4") for n in range(8)
    ]


def test_910a_map_with_tab_indent() -> None:
    assert rows("npu-smi-info-m_910A_8npu.txt") == [
        (n, 0, n, None, "Ascend 910A") for n in range(8)
    ]


def test_a3_map_reads_the_phy_id_column() -> None:
    expected = [(p // 2, p % 2, p, p, "Ascend910") for p in range(16)]
    assert rows("npu-smi-info-m_Ascend910-A3_16npu_synthetic.txt") == expected


def test_950_map_has_slot_and_phy_id_but_no_logic_id() -> None:
    assert rows("npu-smi-info-m_Ascend950_1npu_synthetic.txt") == [(0, 0, None, 0, "Ascend 950PR")]


def test_duo_map_with_non_contiguous_card_ids() -> None:
    expected = [
        (card, chip, 2 * index + chip, None, "Ascend 310P3")
        for index, card in enumerate([0, 96, 32768])
        for chip in (0, 1)
    ]
    assert rows("npu-smi-info-m_310P3_300IDuo_3cards_synthetic.txt") == expected


def test_no_card_is_an_empty_map() -> None:
    assert parse_map("There is no NPU card on this server.\n") == ()


HEADER = "\tNPU ID    Chip ID    Chip Logic ID    Chip Name"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty output"),
        ("\tgarbage here", "line 1: expected the `NPU ID  Chip ID ...` header"),
        ("\tNPU ID    Chip Name", "line 1: header lacks"),
        (f"{HEADER}\n\t0    0", "line 2: expected 4 columns"),
        (f"{HEADER}\n\t0    x    0    Ascend 910B4", "line 2: chip id 'x' is not a number"),
        (f"{HEADER}\n\t0  0  0  Ascend 910B4\n\t1  0  0  Ascend 910B4", "line 3: duplicate logic"),
        (f"{HEADER}\n\t0  0  0  Ascend 910B4\n\t0  0  1  Ascend 910B4", "line 3: duplicate NPU id"),
    ],
)
def test_malformed_map_is_an_error_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(ProbeError, match=r"^`npu-smi info -m`") as raised:
        parse_map(text)
    assert message in str(raised.value)


def test_card_list_of_a_910b4_server() -> None:
    cards = parse_card_list(recorded(FIXTURES / "npu-smi-info-l_910B4_8npu.txt"))
    assert cards == tuple(Card(n, 1) for n in range(8))


def test_card_list_of_duo_cards_skips_product_and_serial() -> None:
    cards = parse_card_list(
        recorded(FIXTURES / "npu-smi-info-l_310P3_300IDuo_3cards_synthetic.txt")
    )
    assert cards == (Card(0, 2), Card(96, 2), Card(32768, 2))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty output"),
        ("\tNPU ID : 0", "line 1: expected `Total Count : N` first"),
        ("\tTotal Count : 2\n\n\tNPU ID : 0\n\tChip Count : 1", "2 cards announced, 1 complete"),
        ("\tCard Count : 1\n\tNPU ID : 0", "1 cards announced, 0 complete"),
        ("\tTotal Count : 1\n\tChip Count : 1", "line 2: Chip Count outside an NPU ID block"),
        ("\tTotal Count : 2\n\tNPU ID : 0\n\tNPU ID : 0", "line 3: duplicate NPU ID"),
        ("\tTotal Count : 1\nbroken", "line 2: expected `key : value`"),
    ],
)
def test_malformed_card_list_is_an_error(text: str, message: str) -> None:
    with pytest.raises(ProbeError, match=r"^`npu-smi info -l`") as raised:
        parse_card_list(text)
    assert message in str(raised.value)
