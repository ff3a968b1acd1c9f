"""A chip's vNPU lock waited for past its bound ends with an error naming the chip (a holder stuck
in npu-smi past every timeout must not hold the node's other calls for good), and a long wait is
logged first."""

import threading

import pytest

from npu_dra.app.services.chip_locks import ChipLocks
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import DeviceName


def test_a_wait_past_the_bound_names_the_chip(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(ChipLocks, "WAIT_S", 0.4)
    monkeypatch.setattr(ChipLocks, "WARN_S", 0.1)
    locks, held, done = ChipLocks(), threading.Event(), threading.Event()

    def holder() -> None:
        with locks.holding([DeviceName("npu-3")]):
            held.set()
            done.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        chips = [DeviceName("npu-1"), DeviceName("npu-3")]
        with (
            pytest.raises(PrepareError, match=r"npu-3: another call has held it"),
            locks.holding(chips),
        ):
            pass
        with locks.holding([DeviceName("npu-1")]):  # the chip taken before it was let go
            pass
    finally:
        done.set()
        thread.join(10)
    assert any("waiting for npu-3" in r.getMessage() for r in caplog.records)
