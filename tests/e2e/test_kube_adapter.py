"""KubeCluster where the contract suite cannot go: outages, RBAC refusals, racing writers and a
watch that must not lose a change made while it starts.

The retry budget is a promise to the caller (the plugin's start-up, the pool maintainer): an
unreachable or hung API server is reported as ClusterUnavailable within it, naming what failed;
an answer retrying cannot change (403) is reported at once.
"""

from __future__ import annotations

import functools
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client

from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
)
from npu_dra.domain.pool import PoolRef, PublishedDevice, ResourceSlice
from tests.support.controlplane import ControlPlane, api_client_for, free_port

BUDGET_S = 2.0
SLACK_S = 1.5  # one request's worth of scheduling noise on a loaded 2-core machine


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def pool(node: str, driver: str, count: int, *, chip: str = "910B4") -> tuple[ResourceSlice, ...]:
    found = tuple(
        PublishedDevice(DeviceName(f"npu-{n}"), {"chipName": chip, "physicalId": n})
        for n in range(count)
    )
    chunks = [found[i : i + 128] for i in range(0, count, 128)] or [()]
    ref = PoolRef(PoolName(node), 0, len(chunks))
    return tuple(ResourceSlice(DriverName(driver), NodeName(node), ref, c) for c in chunks)


def kubeconfig_for(plane: ControlPlane, server: str, path: Path) -> Path:
    """The admin kubeconfig, pointed at `server`."""
    path.write_text(plane.kubeconfig.read_text().replace(plane.server, server))
    return path


@pytest.fixture
def driver(control_plane: ControlPlane) -> Iterator[str]:
    name = f"{uuid.uuid4().hex[:8]}.adapter.example.com"
    yield name
    client.ResourceV1Api(control_plane.api_client).delete_collection_resource_slice(
        field_selector=f"spec.driver={name}"
    )


# --- outages -------------------------------------------------------------------------------


def assert_unavailable_within_budget(cluster: KubeCluster, node: str, driver: str) -> str:
    started = time.monotonic()
    with pytest.raises(ClusterUnavailable) as raised:
        cluster.publish_pool(
            node=NodeName(node), driver=DriverName(driver), slices=pool(node, driver, 1)
        )
    elapsed = time.monotonic() - started
    assert elapsed < BUDGET_S + SLACK_S, f"gave up after {elapsed:.1f}s, budget {BUDGET_S}s"
    return str(raised.value)


def test_a_closed_port_is_unavailable_within_the_budget(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    closed = f"https://127.0.0.1:{free_port()}"
    api = api_client_for(kubeconfig_for(control_plane, closed, tmp_path / "closed.kubeconfig"))
    cluster = KubeCluster(api, retry_budget_s=BUDGET_S)

    message = assert_unavailable_within_budget(cluster, "n-closed", "d.example.com")

    assert "ResourceSlices" in message
    assert "n-closed" in message
    assert "refused" in message.lower()


@pytest.fixture
def hung_server() -> Iterator[str]:
    """Accepts TCP connections and never answers: an API server stuck behind a dead proxy."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
        for conn in accepted:
            conn.close()


def test_a_hung_server_is_unavailable_within_the_budget(
    control_plane: ControlPlane, hung_server: str, tmp_path: Path
) -> None:
    api = api_client_for(kubeconfig_for(control_plane, hung_server, tmp_path / "hung.kubeconfig"))
    cluster = KubeCluster(api, retry_budget_s=BUDGET_S)

    message = assert_unavailable_within_budget(cluster, "n-hung", "d.example.com")

    assert "timed out" in message.lower() or "timeout" in message.lower()


# --- RBAC ----------------------------------------------------------------------------------


def test_forbidden_is_reported_at_once_and_names_the_denied_request(
    control_plane: ControlPlane, driver: str
) -> None:
    namespace = control_plane.create_namespace(unique("norbac"))
    try:
        kubeconfig = control_plane.service_account_kubeconfig(namespace, "plugin")
        cluster = KubeCluster(api_client_for(kubeconfig), retry_budget_s=30.0)
        node = unique("n-norbac")

        started = time.monotonic()
        with pytest.raises(ClusterUnavailable) as publishing:
            cluster.publish_pool(
                node=NodeName(node), driver=DriverName(driver), slices=pool(node, driver, 1)
            )
        with pytest.raises(ClusterUnavailable) as reading:
            cluster.get_claim(ref=ClaimRef(Namespace(namespace), ClaimName("any"), ClaimUID("a-b")))
        elapsed = time.monotonic() - started
    finally:
        control_plane.delete_namespace(namespace)

    assert elapsed < 2.0, f"a 403 was retried for {elapsed:.1f}s"
    assert "403" in str(publishing.value)
    assert "resourceslices" in str(publishing.value)
    assert f"system:serviceaccount:{namespace}:plugin" in str(publishing.value)
    assert "403" in str(reading.value)
    assert "resourceclaims" in str(reading.value)


# --- racing writers ------------------------------------------------------------------------


def race(*calls: Callable[[], object]) -> list[BaseException]:
    """Runs the calls at once (released together by a barrier); their exceptions."""
    barrier = threading.Barrier(len(calls))
    errors: list[BaseException] = []

    def run(call: Callable[[], object]) -> None:
        barrier.wait()
        try:
            call()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


def publishing(
    cluster: KubeCluster, node: str, driver: str, count: int, chip: str = "910B4"
) -> Callable[[], object]:
    return functools.partial(
        cluster.publish_pool,
        node=NodeName(node),
        driver=DriverName(driver),
        slices=pool(node, driver, count, chip=chip),
    )


def assert_consistent(cluster: KubeCluster, node: str, driver: str, count: int) -> None:
    stored = cluster.list_slices(driver=DriverName(driver), node=NodeName(node))
    pools = {(s.pool.generation, s.pool.resource_slice_count) for s in stored}
    names = [d.name for s in stored for d in s.devices]
    assert len(pools) == 1, f"slices of several generations or counts: {pools}"
    assert pools.pop()[1] == len(stored), f"resourceSliceCount is not {len(stored)}"
    assert sorted(names) == sorted(f"npu-{n}" for n in range(count)), "devices lost or doubled"


def test_two_publishers_racing_on_an_empty_pool_end_consistent(
    control_plane: ControlPlane, driver: str
) -> None:
    """Two plugin instances for one node (a rolling update) publish the same pool at once."""
    for _round in range(5):
        node = unique("n-race")
        writers = [KubeCluster(control_plane.api_client, retry_budget_s=10.0) for _ in range(2)]

        errors = race(*(publishing(w, node, driver, 200) for w in writers))

        assert errors == []
        assert_consistent(writers[0], node, driver, 200)


def test_two_publishers_with_different_pools_both_succeed_and_one_wins_whole(
    control_plane: ControlPlane, driver: str
) -> None:
    node = unique("n-race")
    writers = [KubeCluster(control_plane.api_client, retry_budget_s=10.0) for _ in range(2)]
    publishing(writers[0], node, driver, 200)()

    for round_ in range(5):
        errors = race(
            publishing(writers[0], node, driver, 200, chip=f"a{round_}"),
            publishing(writers[1], node, driver, 130, chip=f"b{round_}"),
        )

        assert errors == []
        stored = writers[0].list_slices(driver=DriverName(driver), node=NodeName(node))
        chips = {d.attributes["chipName"] for s in stored for d in s.devices}
        assert chips in ({f"a{round_}"}, {f"b{round_}"}), f"a mix of both writers: {chips}"
        assert_consistent(writers[0], node, driver, 200 if chips == {f"a{round_}"} else 130)


# --- the watch -----------------------------------------------------------------------------


def test_a_deletion_while_the_watch_starts_is_not_lost(
    control_plane: ControlPlane, driver: str
) -> None:
    """The first on_change of a fresh watch deletes a slice (the kubelet restarting at that very
    moment); the watch must still report it, so the pool cannot stay short until the next
    periodic sync."""
    cluster = KubeCluster(control_plane.api_client, retry_budget_s=10.0)
    node = unique("n-watch")
    [stored] = cluster.publish_pool(
        node=NodeName(node), driver=DriverName(driver), slices=pool(node, driver, 2)
    )
    resource = client.ResourceV1Api(control_plane.api_client)
    calls: list[float] = []
    reported = threading.Event()

    def on_change() -> None:
        if not calls:
            resource.delete_resource_slice(stored.name)
        calls.append(time.monotonic())
        if len(calls) > 1:
            reported.set()

    watch = cluster.watch_slices(
        node=NodeName(node), driver=DriverName(driver), on_change=on_change
    )
    try:
        assert reported.wait(10.0), f"the deletion was never reported (calls: {len(calls)})"
    finally:
        watch.stop()
