"""The start-up heap is frozen out of the collector's full passes."""

import gc
from collections.abc import Iterator

import pytest

from npu_dra.app.heap import freeze_startup_heap


@pytest.fixture
def unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("unfrozen")
def test_objects_alive_at_start_are_no_longer_walked_by_collections() -> None:
    built_at_start = {"inventory": [object()]}
    assert any(o is built_at_start for o in gc.get_objects())
    freeze_startup_heap()
    assert gc.get_freeze_count() > 0
    assert not any(o is built_at_start for o in gc.get_objects())
    created_later = {"claim": [object()]}
    assert any(o is created_later for o in gc.get_objects())
