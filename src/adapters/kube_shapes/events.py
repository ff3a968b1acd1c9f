"""ClusterEvent to an events.k8s.io/v1 Event (what `kubectl events` and `kubectl describe` show).

Node events live in the `default` namespace, as the kubelet's do; a claim's in the claim's. An
event's name is the object's name, a dot and a suffix unique to the sender (the kubelet's
convention); the API server refuses a `generateName` ending in a dot.
"""

import datetime as dt
from typing import Any

from npu_dra.domain.events import ClusterEvent

API_VERSION = "events.k8s.io/v1"
CONTROLLER = "npu-dra.io/kubelet-plugin"


def event_namespace(event: ClusterEvent) -> str:
    return event.regarding.namespace or "default"


def event_to_api(
    event: ClusterEvent, *, instance: str, now: dt.datetime, suffix: str
) -> dict[str, Any]:
    regarding: dict[str, Any] = {
        "apiVersion": event.regarding.api_version,
        "kind": event.regarding.kind,
        "name": event.regarding.name,
    }
    if event.regarding.namespace:
        regarding["namespace"] = event.regarding.namespace
    if event.regarding.uid:
        regarding["uid"] = event.regarding.uid
    return {
        "apiVersion": API_VERSION,
        "kind": "Event",
        "metadata": {
            "name": f"{event.regarding.name}.{suffix}",
            "namespace": event_namespace(event),
        },
        "eventTime": now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "reportingController": CONTROLLER,
        "reportingInstance": instance[:128],
        "action": "Prepare" if event.regarding.kind == "ResourceClaim" else "Probe",
        "reason": event.reason,
        "regarding": regarding,
        "note": event.note,
        "type": event.type.value,
    }
