"""Every test under tests/e2e is marked ``e2e``; the control-plane fixtures (and the build of
its binaries before the first test) come from `tests.support.k8s_fixtures`."""

from __future__ import annotations

from pathlib import Path

import pytest

E2E_DIR = Path(__file__).resolve().parent


def _is_e2e(item: pytest.Item) -> bool:
    return E2E_DIR in Path(item.path).resolve().parents


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _is_e2e(item):
            item.add_marker(pytest.mark.e2e)
