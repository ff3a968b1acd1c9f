"""Backoff: waits double from the first up to the cap, each spread by the jitter, and start
over once something worked."""

import pytest

from npu_dra.domain.backoff import Backoff


def no_spread(low: float, high: float) -> float:
    return 1.0


def test_waits_double_up_to_the_cap_and_start_over_after_a_success() -> None:
    backoff = Backoff(0.5, 4.0, spread=no_spread)
    assert [backoff.next() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    backoff.reset()
    assert backoff.next() == 0.5


def test_every_wait_is_spread_within_the_jitter() -> None:
    backoff = Backoff(10.0, 10.0, jitter=0.2)
    waits = [backoff.next() for _ in range(200)]
    assert all(8.0 <= w <= 12.0 for w in waits)
    assert len(set(waits)) > 100  # spread, not one instant for every plugin


@pytest.mark.parametrize(("first", "cap"), [(0.0, 1.0), (2.0, 1.0), (-1.0, 1.0)])
def test_a_backoff_that_cannot_work_is_refused(first: float, cap: float) -> None:
    with pytest.raises(ValueError, match="backoff needs"):
        Backoff(first, cap)
