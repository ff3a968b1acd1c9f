"""What happens to a cluster behind the plugin's back, per ClusterApi adapter, for the cluster
contract suite: an admin creating Nodes, claims and classes, the kubelet deleting a slice, and a
view of the stored objects with the server's bookkeeping (names, owners, resourceVersions)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Protocol

from kubernetes import client

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.domain.ports import ClusterApi, NodeDirectory, SliceWatcher
from tests.support.controlplane import ControlPlane

WAIT_S = 10.0
CONTRACT_DRIVERS = ".contract.example.com"  # every test driver name ends so


class Admin(Protocol):
    def create_node(self, name: str) -> str: ...  # returns the Node's UID
    def create(self, body: dict[str, Any]) -> dict[str, Any]: ...  # a claim, class or slice
    def delete_slice(self, name: str) -> None: ...
    def stored_slices(self, driver: str) -> list[dict[str, Any]]: ...


class Cluster(ClusterApi, SliceWatcher, NodeDirectory, Protocol): ...


class MemoryAdmin:
    def __init__(self, cluster: MemoryCluster) -> None:
        self.cluster = cluster

    def create_node(self, name: str) -> str:
        return str(
            self.cluster.create({"kind": "Node", "metadata": {"name": name}})["metadata"]["uid"]
        )

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.cluster.create(body)

    def delete_slice(self, name: str) -> None:
        self.cluster.delete("ResourceSlice", name)

    def stored_slices(self, driver: str) -> list[dict[str, Any]]:
        found = self.cluster.list("ResourceSlice")
        return [o for o in found if o["spec"]["driver"] == driver]


class KubeAdmin:
    """The cluster admin on the real API server; removes what it and the tests made."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.core = client.CoreV1Api(plane.api_client)
        self.resource = client.ResourceV1Api(plane.api_client)
        self.nodes: list[str] = []
        self.classes: list[str] = []

    def create_node(self, name: str) -> str:
        self.nodes.append(name)
        node = self.core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=name)))
        return str(node.metadata.uid)

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        if body["kind"] == "DeviceClass":
            self.classes.append(body["metadata"]["name"])
            made = self.resource.create_device_class(body, _preload_content=False)
        elif body["kind"] == "ResourceSlice":  # removed with the contract drivers' slices
            made = self.resource.create_resource_slice(body, _preload_content=False)
        else:
            namespace = body["metadata"]["namespace"]
            made = self.resource.create_namespaced_resource_claim(
                namespace, body, _preload_content=False
            )
        return dict(json.loads(made.data))

    def delete_slice(self, name: str) -> None:
        self.resource.delete_resource_slice(name)

    def stored_slices(self, driver: str) -> list[dict[str, Any]]:
        found = self.resource.list_resource_slice(
            field_selector=f"spec.driver={driver}", _preload_content=False
        )
        return sorted(json.loads(found.data)["items"], key=lambda o: str(o["metadata"]["name"]))

    def clean_up(self) -> None:
        """Removes the nodes and classes it made and every slice of a contract test's driver."""
        for found in self.resource.list_resource_slice().items:
            if found.spec.driver.endswith(CONTRACT_DRIVERS):
                self.resource.delete_resource_slice(found.metadata.name)
        for name in self.nodes:
            self.core.delete_node(name)
        for name in self.classes:
            self.resource.delete_device_class(name)


class Calls:
    """Counts on_change calls; the watch may call it from any thread."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Condition()

    def __call__(self) -> None:
        with self.lock:
            self.count += 1
            self.lock.notify_all()

    def settle(self, quiet_s: float = 1.0) -> int:
        """Waits until no call came for `quiet_s` (a fresh watch may sync once); the count."""
        deadline = time.monotonic() + WAIT_S
        with self.lock:
            while time.monotonic() < deadline:
                seen = self.count
                self.lock.wait(quiet_s)
                if self.count == seen:
                    return seen
        raise AssertionError(f"on_change kept being called for {WAIT_S}s without any change")

    def wait_beyond(self, count: int, what: str) -> None:
        with self.lock:
            if not self.lock.wait_for(lambda: self.count > count, timeout=WAIT_S):
                raise AssertionError(f"no on_change call within {WAIT_S}s after {what}")
