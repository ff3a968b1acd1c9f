"""The serving plugin freezes its start-up heap once its pool is published, not before (the
full collection would hold the GIL while the first publish runs)."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator

import pytest
from plugin_node import Node

from npu_dra.app.commands import kubelet_plugin_runtime as runtime


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def serve_in_background(node: Node, stop: threading.Event) -> threading.Thread:
    thread = threading.Thread(target=node.plugin.serve, args=(stop,), daemon=True)
    thread.start()
    return thread


def test_the_heap_is_frozen_after_the_pool_is_published(
    node: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    published_at_freeze: list[bool] = []
    maintainer = node.container.node.maintainer()
    freeze = runtime.freeze_startup_heap

    def watched() -> None:
        published = maintainer.wait_published(timeout=0)
        freeze()
        published_at_freeze.append(published)

    monkeypatch.setattr(runtime, "freeze_startup_heap", watched)
    stop = threading.Event()
    thread = serve_in_background(node, stop)
    try:
        deadline = time.monotonic() + 10
        while not published_at_freeze and time.monotonic() < deadline:
            time.sleep(0.01)
        assert published_at_freeze == [True]
        assert gc.get_freeze_count() > 0
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()


def test_a_stop_while_no_publish_succeeded_returns_at_once_without_freezing(
    node: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    maintainer = node.container.node.maintainer()
    monkeypatch.setattr(maintainer, "wait_published", lambda timeout=None: False)
    stop = threading.Event()
    thread = serve_in_background(node, stop)
    time.sleep(0.2)
    began = time.monotonic()
    stop.set()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert time.monotonic() - began < 5  # not FREEZE_AFTER_S
    assert gc.get_freeze_count() == 0
