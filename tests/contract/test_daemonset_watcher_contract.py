"""One contract for the DaemonSetWatcher port, over the in-memory DaemonSets and a real API
server (v1.34.3): a watch reports whether the plugin's DaemonSet stands, first as it is, then on
each change: deleted at once (helm's background deletion), marked for deletion (foreground), or
created again; and nothing once stopped. The uninstall (app/services/uninstall.py) trusts it to
tell an uninstall from an upgrade."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from kubernetes import client

from npu_dra.adapters.cluster.kube.daemonset_watch import KubeDaemonSetWatcher
from npu_dra.adapters.cluster.memory_daemonsets import MemoryDaemonSets
from npu_dra.domain.ports import DaemonSetWatcher
from tests.support.controlplane import wait_for
from tests.support.k8s_fixtures import plane_for

NAMESPACE = "default"
WAIT_S = 10.0


class DaemonSets:
    """The port, and what an admin does to the DaemonSet it watches."""

    def __init__(
        self,
        watcher: DaemonSetWatcher,
        apply: Callable[[str], None],
        mark_deleted: Callable[[str], None],
        delete: Callable[[str], None],
    ) -> None:
        self.watcher, self.apply, self.mark_deleted, self.delete = (
            watcher,
            apply,
            mark_deleted,
            delete,
        )


def memory_daemonsets() -> DaemonSets:
    memory = MemoryDaemonSets()
    return DaemonSets(
        memory,
        lambda name: memory.apply(NAMESPACE, name),
        lambda name: memory.mark_deleted(NAMESPACE, name),
        lambda name: memory.delete(NAMESPACE, name),
    )


def daemonset(name: str) -> client.V1DaemonSet:
    labels = {"app": name}
    container = client.V1Container(name="c", image="registry.invalid/none:0")
    return client.V1DaemonSet(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DaemonSetSpec(
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[container]),
            ),
        ),
    )


def kube_daemonsets(api: client.ApiClient) -> DaemonSets:
    apps = client.AppsV1Api(api)

    def mark_deleted(name: str) -> None:
        # A finalizer of ours keeps it, as a foreground deletion keeps it for its pods.
        apps.patch_namespaced_daemon_set(
            name, NAMESPACE, {"metadata": {"finalizers": ["contract.example.com/hold"]}}
        )
        apps.delete_namespaced_daemon_set(name, NAMESPACE)

    def delete(name: str) -> None:
        found = apps.read_namespaced_daemon_set(name, NAMESPACE)
        if found.metadata.finalizers:
            apps.patch_namespaced_daemon_set(name, NAMESPACE, {"metadata": {"finalizers": None}})
        else:
            apps.delete_namespaced_daemon_set(name, NAMESPACE, propagation_policy="Background")

    return DaemonSets(
        KubeDaemonSetWatcher(api),
        lambda name: apps.create_namespaced_daemon_set(NAMESPACE, daemonset(name)),
        mark_deleted,
        delete,
    )


@pytest.fixture(params=["memory", pytest.param("kube-v1.34.3", marks=pytest.mark.e2e)])
def daemonsets(request: pytest.FixtureRequest) -> Iterator[DaemonSets]:
    if request.param == "memory":
        yield memory_daemonsets()
        return
    yield kube_daemonsets(plane_for(request, request.param.removeprefix("kube-")).api_client)


class Reports:
    def __init__(self) -> None:
        self.seen: list[bool] = []
        self._lock = threading.Lock()

    def __call__(self, standing: bool) -> None:
        with self._lock:
            self.seen.append(standing)

    def last(self) -> bool | None:
        with self._lock:
            return self.seen[-1] if self.seen else None

    def wait(self, standing: bool) -> None:
        wait_for(lambda: self.last() is standing or None, timeout=WAIT_S, what=f"{standing}")


def test_a_deleted_daemonset_is_reported_gone(daemonsets: DaemonSets) -> None:
    name, reports = f"contract-{uuid.uuid4().hex[:6]}", Reports()
    daemonsets.apply(name)
    watch = daemonsets.watcher.watch_daemonset(namespace=NAMESPACE, name=name, on_report=reports)
    try:
        reports.wait(True)
        daemonsets.delete(name)
        reports.wait(False)
    finally:
        watch.stop()


def test_a_daemonset_marked_for_deletion_is_reported_gone(daemonsets: DaemonSets) -> None:
    name, reports = f"contract-{uuid.uuid4().hex[:6]}", Reports()
    daemonsets.apply(name)
    watch = daemonsets.watcher.watch_daemonset(namespace=NAMESPACE, name=name, on_report=reports)
    try:
        reports.wait(True)
        daemonsets.mark_deleted(name)
        reports.wait(False)
    finally:
        watch.stop()
        daemonsets.delete(name)


def test_a_missing_daemonset_is_reported_then_its_creation(daemonsets: DaemonSets) -> None:
    name, reports = f"contract-{uuid.uuid4().hex[:6]}", Reports()
    watch = daemonsets.watcher.watch_daemonset(namespace=NAMESPACE, name=name, on_report=reports)
    try:
        reports.wait(False)
        daemonsets.apply(name)
        reports.wait(True)
    finally:
        watch.stop()
        daemonsets.delete(name)


def test_a_stopped_watch_reports_nothing(daemonsets: DaemonSets) -> None:
    name, reports = f"contract-{uuid.uuid4().hex[:6]}", Reports()
    daemonsets.apply(name)
    watch = daemonsets.watcher.watch_daemonset(namespace=NAMESPACE, name=name, on_report=reports)
    reports.wait(True)
    watch.stop()
    before = list(reports.seen)
    daemonsets.delete(name)
    time.sleep(0.5)  # a watch event in flight would have arrived
    assert reports.seen == before
