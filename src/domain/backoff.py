"""`Backoff`: the wait before the next try of something that keeps failing (the API server and
its watches, the hardware, the kubelet's registration): doubling from `first_s` up to `max_s`,
each wait spread by ± `jitter` so that the plugins of a whole cluster, failed by one outage, do
not all come back in the same instant."""

import random
from collections.abc import Callable

import attrs

JITTER = 0.2


@attrs.define
class Backoff:
    first_s: float
    max_s: float
    jitter: float = JITTER
    spread: Callable[[float, float], float] = random.uniform  # replaced in tests
    _next_s: float = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        if not 0 < self.first_s <= self.max_s:
            raise ValueError(f"backoff needs 0 < first ({self.first_s}) <= max ({self.max_s})")
        self._next_s = self.first_s

    def next(self) -> float:
        """The wait before the next try; each one after is twice as long, up to max_s."""
        wait = self._next_s
        self._next_s = min(wait * 2, self.max_s)
        return wait * self.spread(1 - self.jitter, 1 + self.jitter)

    def reset(self) -> None:
        """It worked: the next failure waits first_s again."""
        self._next_s = self.first_s
