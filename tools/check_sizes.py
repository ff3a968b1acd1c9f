"""Keep the house's size rules true: a module at most 300 lines, a function at most 40.

How to run::

    make lint                            # runs it after lint-imports
    python tools/check_sizes.py          # walks src/; exit 1 and one line per violation
    python tools/check_sizes.py DIR ...  # walks other trees (the tests do)

A development tool, kept out of the installed package. The rules are those of the style guide
("small rooms"): a module is measured in physical lines (what `wc -l` counts), a function or
method from its `def` line to its last line, docstring included, decorators not (the ast's
`end_lineno - lineno + 1`). Generated code (the gRPC stubs) is skipped: nobody reads it as a room.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
MODULE_LIMIT = 300
FUNCTION_LIMIT = 40
# Folders skipped, relative to each tree walked: generated code.
GENERATED = ("adapters/grpc/gen",)
# Pure data tables allowed past the function limit, as "<path as reported>:<function>" -> why.
# Prefer none: a table belongs in module-level data, not in the body of a function. An entry that
# no longer names an over-long function is itself reported, so this list cannot go stale.
TABLE_ALLOWANCE: Mapping[str, str] = {}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Report:
    violations: tuple[Violation, ...] = ()
    modules: int = 0
    functions: int = 0
    allowed: frozenset[str] = frozenset()  # the allowance entries that excused a function

    def __add__(self, other: Report) -> Report:
        return Report(
            self.violations + other.violations,
            self.modules + other.modules,
            self.functions + other.functions,
            self.allowed | other.allowed,
        )


def python_files(root: Path, skip: Sequence[str] = GENERATED) -> Iterator[Path]:
    """Every .py file under `root`, sorted, except those under the `skip` folders."""
    skipped = [root / folder for folder in skip]
    for path in sorted(root.rglob("*.py")):
        if not any(path.is_relative_to(folder) for folder in skipped):
            yield path


def functions(tree: ast.AST) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method, named as it is reached: `Class.method`, `outer.inner`."""
    stack: list[tuple[str, ast.AST]] = [("", tree)]
    while stack:
        prefix, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield name, child
                stack.append((f"{name}.", child))
            else:
                stack.append((prefix, child))


def check_module(path: Path, shown: str, allowance: Mapping[str, str]) -> Report:
    """The violations of one module; `shown` is the path its lines are reported under."""
    source = path.read_bytes()
    lines = source.count(b"\n")
    violations: list[Violation] = []
    if lines > MODULE_LIMIT:
        violations.append(Violation(shown, 1, f"module is {lines} lines (limit {MODULE_LIMIT})"))
    try:
        tree = ast.parse(source, filename=shown)
    except SyntaxError as error:
        violations.append(Violation(shown, error.lineno or 1, f"cannot parse: {error.msg}"))
        return Report(tuple(violations), modules=1)
    found = list(functions(tree))
    allowed: set[str] = set()
    for name, node in found:
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length <= FUNCTION_LIMIT:
            continue
        if f"{shown}:{name}" in allowance:
            allowed.add(f"{shown}:{name}")
        else:
            message = f"function {name} is {length} lines (limit {FUNCTION_LIMIT})"
            violations.append(Violation(shown, node.lineno, message))
    return Report(tuple(violations), 1, len(found), frozenset(allowed))


def check(
    roots: Sequence[Path],
    *,
    skip: Sequence[str] = GENERATED,
    allowance: Mapping[str, str] = TABLE_ALLOWANCE,
) -> Report:
    """Every violation under `roots`, each path shown from its root's parent (`src/...`), and
    every allowance entry that excused nothing (stale: the function shrank, moved or went)."""
    report = Report()
    for root in roots:
        for path in python_files(root, skip):
            shown = path.relative_to(root.parent).as_posix()
            report += check_module(path, shown, allowance)
    stale = [
        Violation(key.rpartition(":")[0], 1, f"allowance for {key} excuses nothing: remove it")
        for key in sorted(set(allowance) - report.allowed)
    ]
    ordered = sorted(report.violations, key=lambda v: (v.path, v.line))
    return Report((*ordered, *stale), report.modules, report.functions, report.allowed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("roots", nargs="*", type=Path, default=[REPO_ROOT / "src"])
    args = parser.parse_args(argv)
    report = check(args.roots)
    for violation in report.violations:
        print(violation)
    if report.violations:
        return 1
    print(
        f"sizes ok: {report.modules} modules within {MODULE_LIMIT} lines, "
        f"{report.functions} functions within {FUNCTION_LIMIT}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
