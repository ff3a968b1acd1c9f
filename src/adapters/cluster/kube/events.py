"""Kubernetes Events on a real API server (events.k8s.io/v1), best effort: one short try budget,
since an event is never worth holding anything up for (the sink's worker sends them)."""

import datetime as dt
import functools
import socket
import time
from typing import Any

from kubernetes import client

from npu_dra.adapters.cluster.kube.retry import Deadline, with_retries
from npu_dra.adapters.kube_shapes.events import event_namespace, event_to_api
from npu_dra.domain.events import ClusterEvent

BUDGET_S = 5.0


class KubeEvents:
    def __init__(self, api: client.ApiClient, *, instance: str | None = None) -> None:
        self._api = api
        # hostNetwork: the host's name, which is the node's in practice.
        self._instance = instance or f"npu-dra-{socket.gethostname()}"

    @functools.cached_property
    def _events(self) -> Any:  # built on first use (the client's import cost, see KubeCluster)
        return client.EventsV1Api(self._api)

    def record_event(self, *, event: ClusterEvent) -> None:
        now = dt.datetime.now(dt.UTC)
        suffix = f"{time.time_ns():x}"  # unique per sender, as the kubelet's
        body = event_to_api(event, instance=self._instance, now=now, suffix=suffix)

        def send(deadline: Deadline) -> None:
            self._events.create_namespaced_event(
                event_namespace(event),
                body,
                _preload_content=False,
                _request_timeout=deadline.timeout(),
            )

        with_retries(
            f"recording event {event.reason} on {event.regarding.name}", send, budget_s=BUDGET_S
        )
