"""Sends Kubernetes Events without ever making the caller wait.

`emit` only puts the event on a bounded queue (dropping it when the queue is full) and returns;
one worker thread sends them. The same event (same object and reason) is sent at most once per
`min_gap_s`, so a flapping device or a pod retrying a failing prepare every few seconds cannot
flood the API server. A failed send is logged and forgotten: events are best effort.
"""

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator

from npu_dra.domain.errors import DomainError
from npu_dra.domain.events import ClusterEvent
from npu_dra.domain.ports import EventRecorder

log = logging.getLogger(__name__)

CAPACITY = 256
MIN_GAP_S = 60.0
STOP_WAIT_S = 2.0


class EventSink:
    def __init__(
        self,
        recorder: object,
        *,
        capacity: int = CAPACITY,
        min_gap_s: float = MIN_GAP_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # A cluster API without events (a bare ClusterApi some wiring passes): none are sent.
        self._recorder = recorder if isinstance(recorder, EventRecorder) else None
        self._queue: queue.Queue[ClusterEvent | None] = queue.Queue(maxsize=capacity)
        self._min_gap = min_gap_s
        self._clock = clock
        self._last: dict[tuple[str, str, str, str], float] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.dropped = 0  # full queue or rate-limited

    def emit(self, event: ClusterEvent) -> bool:
        """Queue `event` unless the same one went out within min_gap_s or the queue is full;
        never blocks. Whether it was queued."""
        if self._recorder is None:
            return False
        now = self._clock()
        with self._lock:
            last = self._last.get(event.key)
            if last is not None and now - last < self._min_gap:
                self.dropped += 1
                return False
            try:
                self._queue.put_nowait(event)
            except queue.Full:
                self.dropped += 1
                return False
            self._last[event.key] = now
        return True

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="event-sink", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        try:
            self._queue.put_nowait(None)
        except queue.Full:  # the worker is behind: it is a daemon thread, leave it
            return
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT_S)

    def _run(self) -> None:
        while (event := self._queue.get()) is not None:
            try:
                assert self._recorder is not None  # emit queues nothing otherwise
                self._recorder.record_event(event=event)
            except DomainError as error:
                log.warning(
                    "event %s on %s not recorded: %s", event.reason, event.regarding.name, error
                )
            except Exception:  # a bug must not end the worker
                log.exception("event %s on %s not recorded", event.reason, event.regarding.name)


def running_sink(sink: EventSink) -> Iterator[EventSink]:
    """A DI resource: the worker runs until the container shuts down."""
    sink.start()
    try:
        yield sink
    finally:
        sink.stop()
