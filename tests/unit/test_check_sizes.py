"""tools/check_sizes.py reports what breaks the size rules, and nothing else."""

import ast
from pathlib import Path

import pytest

from tools import check_sizes


def _function(name: str, lines: int, indent: str = "") -> str:
    """Source of a function `lines` long, counted from its `def` line."""
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 2))
    return f"{indent}def {name}() -> int:\n{body}{indent}    return 0\n"


def _write(root: Path, relative: str, source: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    _write(root, "__init__.py", '"""A package."""\n')
    _write(root, "domain/small.py", '"""Small."""\n\n\n' + _function("fits", 40))
    return root


def test_a_clean_tree_passes_with_a_summary(src: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check_sizes.check([src]).violations == ()
    assert check_sizes.main([str(src)]) == 0
    assert (
        capsys.readouterr().out == "sizes ok: 2 modules within 300 lines, 1 functions within 40\n"
    )


def test_an_over_long_function_is_reported_with_its_path_line_and_length(
    src: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(src, "app/long.py", '"""Long."""\n\n\n' + _function("too_long", 41))

    assert check_sizes.main([str(src)]) == 1
    assert (
        capsys.readouterr().out == "src/app/long.py:4: function too_long is 41 lines (limit 40)\n"
    )


def test_a_method_is_named_with_its_class() -> None:
    source = "class Metrics:\n" + _function("__init__", 46, indent="    ")
    named = [(name, node.lineno) for name, node in check_sizes.functions(ast.parse(source))]
    assert named == [("Metrics.__init__", 2)]


def test_an_over_long_module_is_reported_at_its_first_line(src: Path) -> None:
    _write(src, "adapters/big.py", '"""Big."""\n' + "X = 1\n" * 300)

    assert [str(v) for v in check_sizes.check([src]).violations] == [
        "src/adapters/big.py:1: module is 301 lines (limit 300)"
    ]


def test_a_module_of_exactly_the_limit_passes(src: Path) -> None:
    _write(src, "adapters/full.py", '"""Full."""\n' + "X = 1\n" * 299)

    assert check_sizes.check([src]).violations == ()


def test_the_generated_stubs_are_skipped(src: Path) -> None:
    generated = '"""Generated."""\n' + _function("stub", 80) + "X = 1\n" * 400
    _write(src, "adapters/grpc/gen/api_pb2.py", generated)
    _write(src, "adapters/grpc/servicer.py", generated)

    report = check_sizes.check([src])

    assert {v.path for v in report.violations} == {"src/adapters/grpc/servicer.py"}


def test_an_allowance_excuses_only_the_table_it_names(src: Path) -> None:
    _write(src, "app/table.py", '"""Table."""\n' + _function("table", 50) + _function("other", 50))
    allowance = {"src/app/table.py:table": "a pure data table"}

    report = check_sizes.check([src], allowance=allowance)

    assert [v.message for v in report.violations] == ["function other is 50 lines (limit 40)"]


def test_an_allowance_that_excuses_nothing_is_reported(src: Path) -> None:
    allowance = {"src/domain/small.py:fits": "it shrank"}

    report = check_sizes.check([src], allowance=allowance)

    assert [str(v) for v in report.violations] == [
        "src/domain/small.py:1: allowance for src/domain/small.py:fits excuses nothing: remove it"
    ]
