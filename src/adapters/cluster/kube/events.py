"""Kubernetes Events on a real API server (events.k8s.io/v1), best effort: one short try budget,
since an event is never worth holding anything up for (the sink's worker sends them)."""

import datetime as dt
import socket
import time

from kubernetes import client

from npu_dra.adapters.cluster.kube.raw import raw_call
from npu_dra.adapters.cluster.kube.retry import Deadline, with_retries
from npu_dra.adapters.kube_shapes.events import event_namespace, event_to_api
from npu_dra.domain.events import ClusterEvent

BUDGET_S = 5.0
EVENTS = "/apis/events.k8s.io/v1/namespaces/{namespace}/events"


class KubeEvents:
    def __init__(self, api: client.ApiClient, *, instance: str | None = None) -> None:
        self._api = api
        # hostNetwork: the host's name, which is the node's in practice.
        self._instance = instance or f"npu-dra-{socket.gethostname()}"

    def record_event(self, *, event: ClusterEvent) -> None:
        now = dt.datetime.now(dt.UTC)
        suffix = f"{time.time_ns():x}"  # unique per sender, as the kubelet's
        body = event_to_api(event, instance=self._instance, now=now, suffix=suffix)

        def send(deadline: Deadline) -> None:  # not EventsV1Api: its models cost MiBs (raw.py)
            raw_call(
                self._api,
                "POST",
                EVENTS,
                {"namespace": event_namespace(event)},
                deadline.timeout(),
                body=body,
            )

        with_retries(
            f"recording event {event.reason} on {event.regarding.name}", send, budget_s=BUDGET_S
        )
