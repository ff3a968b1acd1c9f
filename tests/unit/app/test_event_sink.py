"""The event sink never makes its caller wait: a full queue drops, the same event is sent at most
once per gap, and a failing or hanging API server costs the caller nothing."""

from __future__ import annotations

import threading

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.app.services.event_sink import EventSink
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.events import ClusterEvent, EventType, Regarding

UNHEALTHY = ClusterEvent(Regarding("Node", "node-a"), "DeviceUnhealthy", "npu-1", EventType.WARNING)
HEALTHY = ClusterEvent(Regarding("Node", "node-a"), "DeviceHealthy", "npu-1")


class HangingRecorder:
    """An API server that never answers until released; counts what reached it."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.recorded: list[ClusterEvent] = []

    def record_event(self, *, event: ClusterEvent) -> None:
        self.entered.set()
        self.release.wait(30)
        self.recorded.append(event)


class FailingRecorder:
    def __init__(self) -> None:
        self.tries = 0

    def record_event(self, *, event: ClusterEvent) -> None:
        self.tries += 1
        raise ClusterUnavailable("connection refused")


def sent_reasons(cluster: MemoryCluster) -> list[str]:
    return [e["reason"] for e in cluster.list("Event")]


def test_events_reach_the_api_as_events_k8s_io_objects() -> None:
    cluster = MemoryCluster()
    sink = EventSink(cluster)
    sink.start()
    assert sink.emit(UNHEALTHY)
    sink.stop()
    [event] = cluster.list("Event")
    assert event["apiVersion"] == "events.k8s.io/v1"
    assert event["metadata"]["namespace"] == "default"
    assert event["regarding"] == {"apiVersion": "v1", "kind": "Node", "name": "node-a"}
    assert (event["type"], event["note"]) == ("Warning", "npu-1")


def test_the_same_event_within_the_gap_is_dropped_and_after_it_sent_again() -> None:
    now = [0.0]
    cluster = MemoryCluster()
    sink = EventSink(cluster, min_gap_s=60.0, clock=lambda: now[0])
    sink.start()
    assert sink.emit(UNHEALTHY)
    assert not sink.emit(UNHEALTHY)
    assert sink.emit(HEALTHY)  # another reason is another event
    now[0] = 61.0
    assert sink.emit(UNHEALTHY)
    sink.stop()
    assert sorted(sent_reasons(cluster)) == ["DeviceHealthy", "DeviceUnhealthy", "DeviceUnhealthy"]
    assert sink.dropped == 1


def test_a_hanging_api_server_never_blocks_emit_and_a_full_queue_drops() -> None:
    recorder = HangingRecorder()
    sink = EventSink(recorder, capacity=2, min_gap_s=0.0)
    sink.start()
    assert sink.emit(UNHEALTHY)
    assert recorder.entered.wait(10)  # the worker is stuck on the first one
    accepted = [sink.emit(HEALTHY) for _ in range(5)]
    recorder.release.set()
    sink.stop()
    assert accepted == [True, True, False, False, False]
    assert sink.dropped == 3


def test_a_failed_send_is_forgotten_and_the_worker_goes_on() -> None:
    recorder = FailingRecorder()
    sink = EventSink(recorder, min_gap_s=0.0)
    sink.start()
    sink.emit(UNHEALTHY)
    sink.emit(HEALTHY)
    sink.stop()
    assert recorder.tries == 2


def test_a_cluster_api_without_events_gets_none_queued() -> None:
    sink = EventSink(object())
    assert not sink.emit(UNHEALTHY)
