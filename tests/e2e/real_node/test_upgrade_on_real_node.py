"""`helm upgrade` of the kubelet plugin on the real node while pods keep starting and stopping.

The chart is installed with the real helm (its own release, namespace and driver name, beside
the session's access objects) on the image built from the Dockerfile, and upgraded to the same
image under a second tag, which changes the DaemonSet's pod template as a new release would.
Meanwhile LOAD_PODS pods, WORKERS at a time, each claim one NPU, start, and are deleted.

With the chart's default surge update the new plugin pod registers under sockets named for its
pod UID beside the old one, and the old one stops only after the new one has been ready
minReadySeconds: at no moment of the rollout (sampled every 20 ms) is the driver without a
registration socket that answers, so no pod's start can meet a missing plugin (the kubelet's
FailedPrepareDynamicResources, which none gets); none fails, every claim is unprepared at the
end, and only the new pod's registration socket is left. With `maxSurge: 0` (the update before
#27) the same run fails on the gap (`UPGRADE_STRATEGY=no-surge` runs it).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.helm_release import (
    Release,
    claim_template,
    helm_release,
    import_image,
    npu_pod,
)
from tests.support.controlplane import wait_for
from tests.support.node_fixtures import IMAGES_CACHE
from tests.support.plugin_image import TAG, build_plugin_image
from tests.support.version import VERSION

RELEASE = NAMESPACE = "npu-dra-upgrade"
DRIVER = "upgrade.npu-dra.io"
NEXT_TAG = f"{VERSION}-next"
LOAD_PODS = 20
WORKERS = 4
FAILED_PREPARE = "FailedPrepareDynamicResources"
SAMPLE_S = 0.02


class Load:
    """LOAD_PODS pods, WORKERS at a time: created, waited Running, deleted; what went wrong."""

    def __init__(self, cluster: RealCluster) -> None:
        self.cluster = cluster
        self.done: list[str] = []
        self.failures: list[str] = []
        self._next = iter(range(LOAD_PODS))
        self._lock = threading.Lock()

    def run(self) -> None:
        workers = [threading.Thread(target=self._work) for _ in range(WORKERS)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    def _work(self) -> None:
        while True:
            with self._lock:
                index = next(self._next, None)
            if index is None:
                return
            name = f"load-{index}"
            try:
                self.cluster.apply(npu_pod(name, NAMESPACE))
                self.cluster.wait_running(name, namespace=NAMESPACE, timeout=120)
                self.cluster.delete_pod(name, namespace=NAMESPACE)
            except Exception as error:  # every failure is reported, not just the first
                with self._lock:
                    self.failures.append(f"{name}: {error}"[:2000])
            with self._lock:
                self.done.append(name)


def warnings_about_load(cluster: RealCluster) -> list[str]:
    found = cluster.plane.kubectl("get", "events", "-n", NAMESPACE, "-o", "json").stdout
    return [
        f"{e['involvedObject']['name']}: {e['reason']}: {e.get('message', '')}"[:500]
        for e in json.loads(found)["items"]
        if e["involvedObject"]["name"].startswith("load-") and e["type"] == "Warning"
    ]


def registration_sockets(cluster: RealCluster) -> list[str]:
    return sorted(p.name for p in cluster.registry_dir.glob(f"{DRIVER}*reg.sock"))


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


class Gaps:
    """While running: whether some registration socket of the driver accepts a connection (the
    kubelet has a plugin to prepare with), every SAMPLE_S; `longest()` stretch without one."""

    def __init__(self, registry: Path) -> None:
        self._registry, self._stop = registry, threading.Event()
        self.samples: list[tuple[float, bool]] = []
        self._thread = threading.Thread(target=self._sample)

    def __enter__(self) -> Gaps:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.is_set():
            serving = any(_answers(p) for p in self._registry.glob(f"{DRIVER}*reg.sock"))
            self.samples.append((time.perf_counter(), serving))
            time.sleep(SAMPLE_S)

    def longest(self) -> float:
        longest, since = 0.0, None
        for at, serving in self.samples:
            if not serving and since is None:
                since = at
            if serving and since is not None:
                longest, since = max(longest, at - since), None
        if since is not None:
            longest = max(longest, self.samples[-1][0] - since)
        return longest


@contextlib.contextmanager
def installed(cluster: RealCluster, home: Path) -> Iterator[Release]:
    """The image under both tags on the node and the chart's release (helm_release.py)."""
    archive = build_plugin_image(IMAGES_CACHE, IMAGES_CACHE / "plugin" / "npu-dra.tar")
    import_image(cluster, archive, TAG, TAG.rsplit(":", 1)[0] + f":{NEXT_TAG}")
    surge = os.environ.get("UPGRADE_STRATEGY") != "no-surge"  # the chart's default
    with helm_release(cluster, home, name=RELEASE, driver=DRIVER, surge=surge) as release:
        yield release


@pytest.mark.timeout(1200)
def test_helm_upgrade_under_load_loses_no_pod_and_no_claim(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    with installed(real_cluster, tmp_path) as release:
        upgrade_under_load(release)


def upgrade_under_load(release: Release) -> None:
    cluster = release.cluster
    release.apply(VERSION)
    release.rolled_out()
    [old] = release.plugin_pods()
    wait_for(lambda: registration_sockets(cluster), timeout=60, what="the plugin registered")
    assert registration_sockets(cluster) == [f"{DRIVER}-{old['metadata']['uid']}-reg.sock"]
    cluster.apply(claim_template(NAMESPACE, DRIVER))
    load = Load(cluster)
    loading = threading.Thread(target=load.run)
    loading.start()
    try:
        wait_for(lambda: len(load.done) >= 3, timeout=300, what="3 pods through before upgrading")
        with Gaps(cluster.registry_dir) as gaps:
            release.apply(NEXT_TAG)
            release.rolled_out()
    finally:
        loading.join(timeout=900)
    # `rollout status` returns once the new pod is available; the DaemonSet controller deletes
    # the old one just then, and it may still be listed (terminating) when the load ended first.
    wait_for(lambda: len(release.plugin_pods()) == 1, timeout=120, what="the old plugin pod gone")
    [new] = release.plugin_pods()
    assert new["metadata"]["uid"] != old["metadata"]["uid"]
    assert new["spec"]["containers"][0]["image"].endswith(f":{NEXT_TAG}")
    assert len(gaps.samples) > 100  # sampled through the whole rollout
    assert gaps.longest() == 0.0, f"{gaps.longest():.2f}s with no plugin registered"
    assert len(load.done) == LOAD_PODS
    assert load.failures == []
    warned = warnings_about_load(cluster)
    assert not [w for w in warned if FAILED_PREPARE in w], "\n".join(warned)
    checkpoint = FileCheckpointStore(cluster.plugins_dir / DRIVER / "checkpoint.json").load()
    assert checkpoint.claims == {}  # every claim prepared was unprepared, by one pod or the other
    wait_for(
        lambda: registration_sockets(cluster) == [f"{DRIVER}-{new['metadata']['uid']}-reg.sock"],
        timeout=60,
        what="only the new plugin pod's registration socket",
    )
