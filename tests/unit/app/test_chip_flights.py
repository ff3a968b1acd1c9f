"""One hardware question per chip at a time (app/services/chip_sharing/flights.py, #44): callers
arriving while it flies share its answer, a failed answer is given at once for `retry_after_s`
and asked again after, chips fly side by side, and a flight past the wait is reported as such.

The clock is the test's: time passes only when the test says so.
"""

import threading

from npu_dra.app.services.chip_sharing.flights import ChipFlights
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DeviceName

NPU_0, NPU_1 = DeviceName("npu-0"), DeviceName("npu-1")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Question:
    """Fails (or not) when asked; counts the askings; may hold until `release`."""

    def __init__(self, error: str | None = None, *, hold: bool = False) -> None:
        self.error, self.asked = error, 0
        self.entered, self._released = threading.Event(), threading.Event()
        if not hold:
            self._released.set()

    def __call__(self) -> None:
        self.asked += 1
        self.entered.set()
        self._released.wait()
        if self.error is not None:
            raise DomainError(self.error)

    def release(self) -> None:
        self._released.set()


def flights(clock: Clock, wait_s: float = 60.0) -> ChipFlights:
    return ChipFlights(wait_s=wait_s, retry_after_s=10.0, clock=clock)


def test_a_failed_answer_is_given_at_once_until_retry_after_then_asked_again() -> None:
    clock, failing = Clock(), Question("npu-0: npu-smi timed out")
    chips = flights(clock)
    assert chips.ask({NPU_0: failing}) == {NPU_0: "npu-0: npu-smi timed out"}
    clock.now = 9.9
    again = chips.ask({NPU_0: failing})
    assert again[NPU_0].startswith("npu-0: npu-smi timed out (the answer to an earlier prepare")
    assert failing.asked == 1
    clock.now = 10.0
    assert chips.ask({NPU_0: Question()}) == {}  # asked again, and answered


def test_callers_arriving_while_it_flies_share_its_answer() -> None:
    held = Question("npu-0: npu-smi timed out", hold=True)
    chips, answers = flights(Clock()), []
    first = threading.Thread(target=lambda: answers.append(chips.ask({NPU_0: held})))
    first.start()
    assert held.entered.wait(30)
    second = threading.Thread(target=lambda: answers.append(chips.ask({NPU_0: Question()})))
    second.start()
    held.release()
    first.join(30)
    second.join(30)
    assert held.asked == 1
    # the second joined the flight, or (started too late to) got its failure as remembered
    assert [list(a) for a in answers] == [[NPU_0], [NPU_0]]
    assert all(a[NPU_0].startswith("npu-0: npu-smi timed out") for a in answers), answers


def test_chips_fly_side_by_side() -> None:
    hanging, fine = Question(hold=True), Question(hold=False)
    chips, answers = flights(Clock()), []
    asking = threading.Thread(
        target=lambda: answers.append(chips.ask({NPU_0: hanging, NPU_1: fine}))
    )
    asking.start()
    assert fine.entered.wait(30)  # npu-1 asked while npu-0's question still hangs
    assert hanging.entered.wait(30)
    hanging.release()
    asking.join(30)
    assert answers == [{}]


def test_a_flight_past_the_wait_is_said_so_and_the_next_caller_joins_it() -> None:
    hanging = Question(hold=True)
    chips = flights(Clock(), wait_s=0.0)
    for _ in range(2):
        answer = chips.ask({NPU_0: hanging})
        assert "npu-0: the hardware has not answered within 0s" in answer[NPU_0]
    assert hanging.entered.wait(30)
    hanging.release()
    assert hanging.asked == 1
