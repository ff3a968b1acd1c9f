"""SIGTERM and SIGINT as a stop request: the long-running commands serve until it is set."""

import logging
import signal
import threading
from types import FrameType

log = logging.getLogger(__name__)


def stop_on_signals() -> threading.Event:
    stop = threading.Event()

    def on_signal(signum: int, _: FrameType | None) -> None:
        log.info("signal %d: stopping", signum)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    return stop
