"""The preparer's state lock: a wait for it ends, logged first, then with an error naming it."""

import threading

import pytest

from npu_dra.app.services import bounded_lock
from npu_dra.app.services.bounded_lock import BoundedLock
from npu_dra.domain.errors import StateError


def test_a_wait_past_the_bound_fails_naming_the_lock(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(bounded_lock, "WARN_S", 0.1)
    lock, held, done = BoundedLock("state lock", wait_s=0.4), threading.Event(), threading.Event()

    def holder() -> None:
        with lock:
            held.set()
            done.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        with pytest.raises(StateError, match="state lock has been held for more than"), lock:
            pass
    finally:
        done.set()
        thread.join(10)
    with lock:  # free again once let go
        pass
    assert any("waiting for the state lock" in r.getMessage() for r in caplog.records)
