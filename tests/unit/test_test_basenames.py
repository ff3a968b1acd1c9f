"""pytest imports test modules by basename (rootdir mode, no packages): two test files of the same
name anywhere under tests/ stop the whole run at collection ("import file mismatch")."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_a_name_of_its_own() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert sorted(n for n, count in names.items() if count > 1) == []
    assert names["test_test_basenames.py"] == 1  # the walk found the tests at all
