"""Every recorded `npu-smi info` parses to exactly the chips it shows, in every layout."""

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_info import parse_info
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from npu_dra.domain.device import Health
from tests.support.fake_npu_smi import FIXTURES

OK, WARN, BAD = Health.HEALTHY, Health.DEGRADED, Health.UNHEALTHY
A2_BUSES = ["C1", "C2", "81", "82", "01", "02", "41", "42"]
A3_BUSES = ["9D", "9F", "99", "9B", "95", "97", "91", "93"]
A3_BUSES += ["1D", "1F", "19", "1B", "15", "17", "11", "13"]

# (card, chip index, name, health, bus id, memory MiB, logic id, physical id) per chip
EXPECTED = {
    "npu-smi-info_910B4_8npu.txt": (
        "910",
        [(n, 0, "910B4", OK, f"0000:{A2_BUSES[n]}:00.0", 32768, None, None) for n in range(8)],
    ),
    "npu-smi-info_910B3_8npu.txt": (
        "910",
        [(n, 0, "910B3", OK, f"0000:{A2_BUSES[n]}:00.0", 65536, None, None) for n in range(8)],
    ),
    "npu-smi-info_910A_8npu_busy.txt": (
        "910",
        [
            (n, 0, "xxx", OK, f"0000:{bus}:00.0", 32768, None, None)
            for n, bus in enumerate(["C1", "81", "41", "01", "C2", "82", "42", "02"])
        ],
    ),
    "npu-smi-info_910ProB_1npu_busy.txt": (
        "910",
        [(0, 0, "910ProB", OK, "0000:C1:00.0", 32768, None, None)],
    ),
    "npu-smi-info_Ascend910-A3_16npu_synthetic.txt": (
        "A3",
        [
            (
                p // 2,
                p % 2,
                "Ascend910",
                WARN if p == 11 else OK,
                f"0000:{bus}:00.0",
                *(65536, None, p),
            )
            for p, bus in enumerate(A3_BUSES)
        ],
    ),
    "npu-smi-info_310P3_300IDuo_1card_container.txt": (
        "310",
        [
            (1792, 0, "310P3", OK, "0000:07:00.0", 44280, 0, None),
            (1792, 1, "310P3", OK, "0000:07:00.0", 43693, 1, None),
        ],
    ),
    "npu-smi-info_310P3_300IDuo_3cards_synthetic.txt": (
        "310",
        [
            (
                card,
                chip,
                "310P3",
                BAD if (card, chip) == (96, 1) else OK,
                f"0000:{bus}:00.0",
                *(44280 - 587 * chip, 2 * index + chip, None),
            )
            for index, (card, bus) in enumerate([(0, "01"), (96, "41"), (32768, "81")])
            for chip in (0, 1)
        ],
    ),
    "npu-smi-info_310P3_300IPro_2cards_noheader.txt": (
        "310",
        [
            (0, 0, "310P3", OK, "0000:82:00.0", 21534, 0, None),
            (1, 0, "310P3", OK, "0000:89:00.0", 21534, 1, None),
        ],
    ),
    "npu-smi-info_310Pvir01_in-container.txt": (
        "310",
        [(7, 0, "310Pvir01", OK, "0000:00:07.0", 2690, 0, None)],
    ),
    "npu-smi-info_310B4_Atlas200IDKA2.txt": (
        "310",
        [(0, 0, "310B4", OK, None, 3513, 0, None)],
    ),
    "npu-smi-info_Ascend950_1npu_doc.txt": (
        "950",
        [(0, 0, "xxx", OK, "0000:91:00.0", 86016, None, None)],
    ),
}
ELIDED = {  # documentation captures: the doc's own lines, and the chips it did show
    "npu-smi-info_910B1_8npu_elided.txt": (
        "...",
        [
            (n, 0, "910B1", OK, f"0000:{bus}:00.0", 65536, None, None)
            for n, bus in [(0, "C1"), (1, "01"), (7, "42")]
        ],
    ),
    "npu-smi-info_910A_8npu_idle_elided.txt": (
        "/usr/local/bin/npu-smi info",
        [
            (0, 0, "xxx", OK, "0000:61:00.0", 32768, None, None),
            (7, 0, "xxx", OK, "0000:3D:00.0", 32768, None, None),
        ],
    ),
}


def chips_of(text: str) -> list[tuple[object, ...]]:
    return [
        (
            c.card_id,
            c.chip_index,
            c.name,
            c.health,
            c.bus_id,
            c.memory_mib,
            c.logic_id,
            c.physical_id,
        )
        for c in parse_info(text).chips
    ]


def test_every_recorded_info_has_expected_chips() -> None:
    recordings = {path.name for path in FIXTURES.glob("npu-smi-info_*.txt")}
    assert recordings == set(EXPECTED) | set(ELIDED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_info_parses_to_the_chips_it_shows(name: str) -> None:
    layout, chips = EXPECTED[name]
    text = recorded(FIXTURES / name)
    assert parse_info(text).layout is not None
    assert parse_info(text).layout.name == layout  # type: ignore[union-attr]
    assert chips_of(text) == chips


@pytest.mark.parametrize("name", sorted(ELIDED))
def test_elided_documentation_capture_is_rejected_at_the_elision(name: str) -> None:
    doc_line, _ = ELIDED[name]
    with pytest.raises(ProbeError, match=r"`npu-smi info` line \d+: .*") as raised:
        parse_info(recorded(FIXTURES / name))
    assert repr(doc_line) in str(raised.value)


@pytest.mark.parametrize("name", sorted(ELIDED))
def test_elided_capture_without_the_doc_lines_parses_the_chips_shown(name: str) -> None:
    doc_line, chips = ELIDED[name]
    lines = recorded(FIXTURES / name).splitlines()
    kept = [line for line in lines if line.strip() not in ("...", doc_line)]
    assert chips_of("\n".join(kept)) == chips


B4 = recorded(FIXTURES / "npu-smi-info_910B4_8npu.txt")
WARNING = "[WARNING]The driver package may not be completely installed. Please reinstall it."


def test_no_npu_card_is_an_empty_report() -> None:
    report = parse_info("There is no NPU card on this server.\n")
    assert report.chips == ()
    assert report.layout is None


def test_warning_lines_and_blank_lines_are_ignored_anywhere() -> None:
    lines = B4.splitlines()
    noisy = [WARNING, "", *lines[:20], WARNING, "", *lines[20:], WARNING]
    assert chips_of("\n".join(noisy)) == chips_of(B4)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no chip table: the output is empty"),
        ("\n\n", "no chip table: the output is empty"),
        ("garbage", "line 1: not part of the npu-smi info tables: 'garbage'"),
        ("\n".join(B4.splitlines()[:7]), "line 7: chip row without its second row"),
        ("\n".join(B4.splitlines()[:6]), "no chip table: the output ends at line 6"),
        (B4.replace("| OK ", "| Sick "), "line 7: unknown health word 'Sick'"),
        (B4.replace("0000:C2:00.0", "0000:XX:00.0"), "line 11: '0000:XX:00.0' is not a PCI"),
        (B4.replace("| 1     910B4", "| 0     910B4"), "line 10: duplicate NPU id and chip"),
        (
            B4.replace("Chip                      |", "Chip Bogus                |"),
            "line 5: unknown",
        ),
        (B4 + "trailing junk\n", "line 50: not part of the npu-smi info tables"),
        (B4.replace("No running processes found in NPU 3", "x"), "line 40: not a process"),
        ("There is no NPU card on this server.\n" + B4, "line 2: table after"),
    ],
)
def test_malformed_info_is_an_error_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(ProbeError, match=r"^`npu-smi info`") as raised:
        parse_info(text)
    assert message in str(raised.value)
