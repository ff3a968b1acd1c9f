"""`--fault-codes FILE`: an operator's fault-code table, checked when the flags are parsed."""

import argparse
import json
from pathlib import Path

import pytest

from npu_dra.app.options.node import FAULT_CODES, MAX_FAULT_CODES_BYTES
from npu_dra.domain.fault_codes import FaultLevel


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument(*FAULT_CODES.flags, dest=FAULT_CODES.dest, type=FAULT_CODES.parse)
    return parser.parse_args(argv)


def test_empty_means_the_built_in_table() -> None:
    assert FAULT_CODES.parse(FAULT_CODES.default) is None


def test_a_yaml_file_is_the_table(tmp_path: Path) -> None:
    path = tmp_path / "faultCode.yaml"
    path.write_text("SeparateNPUCodes:\n  - '81078603'\n")
    table = parse("--fault-codes", str(path)).fault_codes
    assert table.level_of("81078603") is FaultLevel.SEPARATE_NPU


def test_an_unquoted_yaml_code_is_refused(tmp_path: Path) -> None:
    """YAML reads 81078603 as a number (and 01234567 as octal): the code must be quoted."""
    path = tmp_path / "faultCode.yaml"
    path.write_text("SeparateNPUCodes:\n  - 81078603\n")
    with pytest.raises(
        argparse.ArgumentError, match=r"SeparateNPUCodes\[0\] = 81078603 .*quote it"
    ):
        parse("--fault-codes", str(path))


def test_a_json_file_is_the_table(tmp_path: Path) -> None:
    path = tmp_path / "faultCode.json"
    path.write_text(json.dumps({"PreSeparateNPUCodes": ["80E18402"]}))
    table = parse("--fault-codes", str(path)).fault_codes
    assert table.level_of("80E18402") is FaultLevel.PRE_SEPARATE_NPU


def test_a_bad_entry_names_the_flag_file_and_entry(tmp_path: Path) -> None:
    path = tmp_path / "faultCode.json"
    path.write_text(json.dumps({"SeparateNPUCodes": ["80E18402", "8C03A0"]}))
    with pytest.raises(argparse.ArgumentError) as raised:
        parse("--fault-codes", str(path))
    message = str(raised.value)
    assert message.startswith("argument --fault-codes:")
    assert f"{path}: SeparateNPUCodes[1] = '8C03A0' is not a fault code" in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "No such file"),
        ("{unclosed", "neither JSON nor YAML"),
        ("x" * (MAX_FAULT_CODES_BYTES + 1), f"more than {MAX_FAULT_CODES_BYTES} bytes"),
    ],
)
def test_an_unreadable_file_is_named(tmp_path: Path, content: str | None, expected: str) -> None:
    path = tmp_path / "faultCode.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(argparse.ArgumentError, match=expected) as raised:
        parse("--fault-codes", str(path))
    assert str(path) in str(raised.value)
