"""The progress line for long simulations: shown on a terminal only, rewritten at most twice a
second, always showing the last pod, and cleared at the end."""

import io

from npu_dra.app.simulation.progress import Progress, terminal_progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_line_is_rewritten_at_most_twice_a_second_and_cleared() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress(stream, 3000, clock=clock)
    for done in range(1, 3001):
        clock.now = done * 0.001  # a pod a millisecond: three seconds in all
        progress.pod_done(done)
    progress.close()
    shown = [part for part in stream.getvalue().split("\r") if part.strip()]
    assert shown[0] == "simulate: pods 1/3000"
    assert shown[-1] == "simulate: pods 3000/3000"
    assert 6 <= len(shown) <= 8, shown
    assert stream.getvalue().endswith("\r" + " " * len("simulate: pods 3000/3000") + "\r")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_only_a_terminal_and_a_long_run_get_one() -> None:
    assert terminal_progress(io.StringIO(), 20_000) is None  # a pipe or a CI log
    assert terminal_progress(Terminal(), 10) is None  # over before it would show
    assert terminal_progress(Terminal(), 20_000) is not None
