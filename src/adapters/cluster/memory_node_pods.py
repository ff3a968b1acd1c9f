"""An in-memory NodePodSource: pods that tests apply and delete (raw core/v1 objects, read as the
kube adapter reads them), claims read from a MemoryCluster, and watch callbacks given
synchronously, on the caller's thread."""

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.kube_shapes.claims import claim_from_api
from npu_dra.adapters.kube_shapes.pods import node_pod
from npu_dra.domain.claims import NodePod, ResourceClaim
from npu_dra.domain.errors import NotFound
from npu_dra.domain.ids import ClaimName, Namespace, NodeName


class MemoryNodePods:
    def __init__(self, claims: MemoryCluster) -> None:
        self._claims = claims
        self._pods: dict[str, dict[str, Any]] = {}  # uid -> object
        self._watches: list[_Watch] = []
        self._lock = threading.Lock()

    def apply(self, pod: Mapping[str, Any]) -> None:
        """Create or replace a pod (its metadata.uid names it)."""
        body = dict(pod)
        with self._lock:
            self._pods[str(body["metadata"]["uid"])] = body
        self._notify(body, deleted=False)

    def delete(self, uid: str) -> None:
        with self._lock:
            body = self._pods.pop(uid, None)
        if body is not None:
            self._notify(body, deleted=True)

    def read_claim(self, *, namespace: Namespace, name: ClaimName) -> ResourceClaim:
        obj = self._claims.get("ResourceClaim", name, namespace)
        if obj is None:
            raise NotFound(f"ResourceClaim {namespace}/{name} not found")
        return claim_from_api(obj)

    def watch_node_pods(
        self,
        *,
        node: NodeName,
        on_list: Callable[[Sequence[NodePod]], None],
        on_pod: Callable[[NodePod], None],
    ) -> "_Watch":
        found = _Watch(self, node, on_pod)
        with self._lock:
            self._watches.append(found)
            bound = [p for p in self._pods.values() if _node_of(p) == node]
        on_list([pod for pod in map(node_pod, bound) if pod is not None])
        return found

    def _notify(self, body: Mapping[str, Any], *, deleted: bool) -> None:
        pod = node_pod(body, deleted=deleted)
        with self._lock:
            watches = [w for w in self._watches if w.node == _node_of(body)]
        for found in watches:
            if pod is not None:
                found.on_pod(pod)

    def _unwatch(self, found: "_Watch") -> None:
        with self._lock:
            self._watches = [w for w in self._watches if w is not found]


def _node_of(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


class _Watch:
    def __init__(
        self, owner: MemoryNodePods, node: NodeName, on_pod: Callable[[NodePod], None]
    ) -> None:
        self._owner, self.node, self.on_pod = owner, node, on_pod

    def stop(self) -> None:
        self._owner._unwatch(self)
