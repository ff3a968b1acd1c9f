"""Property-based: whatever npu-smi prints, the parsers answer with a result or a ProbeError.

Arbitrary text, and real recordings truncated, with a line dropped, shuffled or with garbage
inserted. Where a mutation still parses, it must not invent chips: truncating, dropping or
inserting lines may only ever lose chips, which the probe then catches against `-m`.
"""

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_info import parse_info
from npu_dra.adapters.hardware.npu_smi.parse_map import parse_card_list, parse_map
from npu_dra.adapters.hardware.npu_smi.parse_memory import parse_memory
from npu_dra.adapters.hardware.npu_smi.parse_topo import parse_topo
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from tests.support.fake_npu_smi import FIXTURES

PARSERS: dict[str, Callable[[str], object]] = {
    "npu-smi-info_": parse_info,
    "npu-smi-info-m_": parse_map,
    "npu-smi-info-l_": parse_card_list,
    "npu-smi-info-t-topo_": parse_topo,
    "npu-smi-info-t-memory_": lambda text: parse_memory(text, command="npu-smi info -t memory"),
    "npu-smi-info-t-usages_": lambda text: parse_memory(text, command="npu-smi info -t usages"),
}
RECORDINGS = {
    path.name: recorded(path)
    for path in sorted(FIXTURES.glob("npu-smi-*.txt"))
    if any(path.name.startswith(prefix) for prefix in PARSERS) and "elided" not in path.name
}
TABLE_TEXT = st.text(alphabet=st.sampled_from("|+-= \t\n0123456789:./ABCOKNPUXHS"), max_size=400)
LINE = st.text(max_size=80).filter(lambda text: "\n" not in text and "\r" not in text)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def parser_for(name: str) -> Callable[[str], object]:
    prefix = max((p for p in PARSERS if name.startswith(p)), key=len)
    return PARSERS[prefix]


def outcome(parse: Callable[[str], object], text: str) -> object | ProbeError:
    try:
        return parse(text)
    except ProbeError as error:
        return error


def chip_keys(text: str) -> set[tuple[object, ...]] | None:
    result = outcome(parse_info, text)
    if isinstance(result, ProbeError):
        return None
    return {
        (c.card_id, c.chip_index, c.name, c.health, c.bus_id, c.memory_mib) for c in result.chips
    }  # type: ignore[attr-defined]


@pytest.mark.parametrize("parse", list(PARSERS.values()), ids=list(PARSERS))
@SETTINGS
@given(text=st.one_of(st.text(max_size=400), TABLE_TEXT))
def test_arbitrary_text_is_a_result_or_a_probe_error(
    parse: Callable[[str], object], text: str
) -> None:
    outcome(parse, text)


@pytest.mark.parametrize("name", sorted(RECORDINGS))
@SETTINGS
@given(data=st.data())
def test_mutated_recordings_are_a_result_or_a_probe_error(name: str, data: st.DataObject) -> None:
    lines = RECORDINGS[name].splitlines()
    mutation = data.draw(st.sampled_from(["truncate", "drop", "shuffle", "garbage"]))
    if mutation == "truncate":
        lines = lines[: data.draw(st.integers(0, len(lines)))]
    elif mutation == "drop" and lines:
        del lines[data.draw(st.integers(0, len(lines) - 1))]
    elif mutation == "shuffle":
        lines = data.draw(st.permutations(lines))
    else:
        lines.insert(data.draw(st.integers(0, len(lines))), data.draw(LINE))
    outcome(parser_for(name), "\n".join(lines))


@pytest.mark.parametrize("name", sorted(n for n in RECORDINGS if n.startswith("npu-smi-info_")))
@SETTINGS
@given(data=st.data())
def test_info_that_survives_losing_or_gaining_a_line_never_invents_chips(
    name: str, data: st.DataObject
) -> None:
    original = chip_keys(RECORDINGS[name])
    assert original
    lines = RECORDINGS[name].splitlines()
    index = data.draw(st.integers(0, len(lines) - 1))
    if data.draw(st.booleans()):
        del lines[index]
    else:
        lines.insert(index, data.draw(LINE))
    survived = chip_keys("\n".join(lines))
    assert survived is None or survived <= original
