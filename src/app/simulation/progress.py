"""A progress line on a terminal for long simulations: `pods 1200/20000`, rewritten in place at
most twice a second and cleared at the end. Only where stderr is a terminal: logs and CI output
stay free of it."""

import time
from collections.abc import Callable
from typing import TextIO

EVERY_S = 0.5
LONG_RUN_PODS = 1_000  # shorter runs are over before a line would help


class Progress:
    def __init__(
        self, stream: TextIO, total: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._stream = stream
        self._total = total
        self._clock = clock
        self._shown_at: float | None = None
        self._width = 0

    def pod_done(self, done: int) -> None:
        now = self._clock()
        if self._shown_at is not None and now - self._shown_at < EVERY_S and done < self._total:
            return
        self._shown_at = now
        self._write(f"simulate: pods {done}/{self._total}")

    def close(self) -> None:
        if self._width:
            self._write("")

    def _write(self, text: str) -> None:
        self._stream.write("\r" + text.ljust(self._width) + ("\r" if not text else ""))
        self._stream.flush()
        self._width = len(text)


def terminal_progress(stream: TextIO, total: int) -> Progress | None:
    """A Progress where `stream` is a terminal and the run is long enough to want one."""
    return Progress(stream, total) if total >= LONG_RUN_PODS and stream.isatty() else None
