"""A node with prepared claims upgraded from the last release to the working tree, and back.

The release (deploy/RELEASES: its tag and commit; tests/support/releases.py) is installed as it
shipped: its own chart and the image its own Dockerfile builds, both from its commit exported
with `git archive`. Two pods hold an NPU each; the checkpoint on disk is version 1. `helm
upgrade` to the working tree's chart and image keeps both pods running on their NPUs and leaves
the files as they were until the first change (an old instance beside the new one still reads
them), which migrates them to version 2. Back to the release with claims still prepared, the
release's plugin refuses to start and names what to do, while the working tree's pod keeps
serving (the chart's surge update keeps it until the new pod is ready). Once the node is drained
the checkpoint is left in the version-1 form, and the release starts and serves again.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.domain.ids import ClaimUID
from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.helm_release import (
    Release,
    claim_template,
    helm_release,
    import_image,
    npu_pod,
)
from tests.e2e.real_node.test_seed_on_real_node import char_devices, physical_ids
from tests.support import releases
from tests.support.controlplane import wait_for
from tests.support.node_fixtures import IMAGES_CACHE
from tests.support.plugin_image import TAG, build_plugin_image

NAME = "npu-dra-release-upgrade"  # the helm release, its namespace and its DaemonSet
DRIVER = "release.npu-dra.io"
HEAD_TAG = "working-tree"
V1, V2 = "npu-dra.checkpoint/v1", "npu-dra.checkpoint/v2"
REFUSAL = "checkpoint version 2 was written by a newer npu-dra"
WHAT_TO_DO = "downgrade only a node without prepared claims (drain it first)"
CHART_IN_TREE = Path("deploy/helm/npu-dra")
DAVINCI = re.compile(r"davinci(\d+)")


def shipped() -> releases.Release:
    """The newest release; a clone without its commit fails here, saying so."""
    try:
        return releases.latest()
    except releases.ReleaseError as error:
        pytest.fail(str(error), pytrace=False)


@dataclass
class Scene:
    cluster: RealCluster
    helm: Release
    shipped: releases.Release
    chart: Path  # the release's own chart, from its exported tree

    @property
    def checkpoint(self) -> Path:
        return self.cluster.plugins_dir / DRIVER / "checkpoint.json"

    def files(self) -> tuple[bytes, bytes]:
        """The checkpoint's snapshot and journal, as they are on disk."""
        journal = self.checkpoint.with_name("checkpoint.json.journal")
        return self.checkpoint.read_bytes(), journal.read_bytes() if journal.exists() else b""

    def versions(self) -> list[str]:
        """The apiVersion of the snapshot, then of each journal line's document."""
        snapshot, journal = self.files()
        lines = [json.loads(line)["put"]["apiVersion"] for line in journal.splitlines()]
        return [json.loads(snapshot)["apiVersion"], *lines]

    def claims(self) -> set[str]:
        """The claims the checkpoint holds (read by the working tree's code: every version)."""
        return {str(uid) for uid in FileCheckpointStore(self.checkpoint).load().claims}

    def start(self, pod: str) -> str:
        """`pod` Running with one NPU, which its container sees; its claim's UID."""
        self.cluster.apply(npu_pod(pod, NAME))
        self.cluster.wait_running(pod, namespace=NAME)
        [uid] = self.cluster.claim_uids(pod, NAME)
        self.assert_sees_its_npu(pod, uid)
        return uid

    def assert_sees_its_npu(self, pod: str, uid: str) -> None:
        held = FileCheckpointStore(self.checkpoint).load().claims
        devices = [str(d.device) for d in held[ClaimUID(uid)].devices]
        listing = self.cluster.in_container(pod, "ls", "-ln", "/dev", namespace=NAME)
        found = [DAVINCI.fullmatch(name) for name in char_devices(listing)]
        seen = sorted(int(match.group(1)) for match in found if match)
        assert seen == physical_ids(devices), (pod, listing)

    def stop(self, pod: str, uid: str) -> None:
        """`pod` deleted and its claim unprepared by a plugin."""
        self.cluster.delete_pod(pod, NAME)
        wait_for(lambda: uid not in self.claims(), timeout=60, what=f"{pod}'s claim unprepared")

    def containers(self, *pods: str) -> dict[str, tuple[str, int]]:
        """Each pod's container id and restart count."""
        found = {}
        for pod in pods:
            [status] = self.cluster.read_pod(pod, NAME)["status"]["containerStatuses"]
            found[pod] = (status["containerID"], status["restartCount"])
        return found

    def plugin(self, tag: str) -> dict[str, Any] | None:
        """The plugin pod running the image tagged `tag`, if there is one."""
        found = [
            p
            for p in self.helm.plugin_pods()
            if p["spec"]["containers"][0]["image"].endswith(f":{tag}")
            and not p["metadata"].get("deletionTimestamp")
        ]
        assert len(found) <= 1, [p["metadata"]["name"] for p in found]
        return found[0] if found else None

    def only_plugin(self) -> dict[str, Any]:
        """The rollout complete and the old plugin pod gone; the one left."""
        self.helm.rolled_out()

        def one() -> dict[str, Any] | None:
            pods = self.helm.plugin_pods()
            return pods[0] if len(pods) == 1 else None

        return wait_for(one, timeout=60, what="one plugin pod left")

    def plugin_log(self, pod: dict[str, Any]) -> str:
        return self.cluster.node.pod_log(NAME, pod["metadata"]["name"], lines=5000)


@contextlib.contextmanager
def installed(cluster: RealCluster, home: Path) -> Iterator[Scene]:
    """Both images on the node, the release's tree exported; everything uninstalled after."""
    release = shipped()
    chart = releases.export_tree(release, home / release.tag) / CHART_IN_TREE
    import_image(cluster, releases.release_image(IMAGES_CACHE, release), release.image)
    head = build_plugin_image(IMAGES_CACHE, IMAGES_CACHE / "plugin" / "npu-dra.tar")
    import_image(cluster, head, TAG, f"{releases.IMAGE_REPOSITORY}:{HEAD_TAG}")
    with helm_release(cluster, home, name=NAME, driver=DRIVER) as helm:
        yield Scene(cluster, helm, release, chart)


@pytest.mark.timeout(1500)
def test_release_upgrades_to_head_with_claims_and_back_once_drained(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    with installed(real_cluster, tmp_path) as scene:
        held = on_the_release(scene)
        held = upgraded_to_head(scene, held)
        held = downgrade_refused_while_claims_are_held(scene, held)
        downgraded_once_drained(scene, held)


def on_the_release(scene: Scene) -> dict[str, str]:
    """The release installed from its own chart; two pods on it; the checkpoint version 1."""
    scene.helm.apply(scene.shipped.tag, chart=scene.chart)
    scene.helm.rolled_out()
    assert scene.plugin(scene.shipped.tag) is not None
    scene.cluster.apply(claim_template(NAME, DRIVER))
    held = {pod: scene.start(pod) for pod in ("first", "second")}
    assert scene.claims() == set(held.values())
    assert set(scene.versions()) == {V1}, scene.versions()
    return held


def upgraded_to_head(scene: Scene, held: dict[str, str]) -> dict[str, str]:
    """HEAD's chart and image: the pods untouched, the files too until the first unprepare,
    which migrates them to version 2; a new pod starts."""
    files, containers = scene.files(), scene.containers(*held)
    scene.helm.apply(HEAD_TAG)
    scene.only_plugin()
    head = scene.plugin(HEAD_TAG)
    assert head is not None
    assert scene.containers(*held) == containers
    for pod, uid in held.items():
        scene.assert_sees_its_npu(pod, uid)
    assert scene.files() == files  # nothing rewritten before the first change
    scene.stop("first", held.pop("first"))
    assert scene.versions()[0] == V2, scene.versions()
    assert "migrated" in scene.plugin_log(head), scene.plugin_log(head)[-3000:]
    held["third"] = scene.start("third")
    assert scene.claims() == set(held.values())
    return held


def downgrade_refused_while_claims_are_held(scene: Scene, held: dict[str, str]) -> dict[str, str]:
    """Back to the release with claims prepared: its pod refuses to start, saying why and what
    to do; HEAD's pod stays and keeps preparing; running pods are untouched."""
    containers = scene.containers(*held)
    scene.helm.apply(scene.shipped.tag, chart=scene.chart)

    def refused() -> dict[str, Any] | None:
        pod = scene.plugin(scene.shipped.tag)
        return pod if pod is not None and REFUSAL in scene.plugin_log(pod) else None

    refusing = wait_for(refused, timeout=120, what="the release's plugin to refuse the checkpoint")
    assert WHAT_TO_DO in scene.plugin_log(refusing), scene.plugin_log(refusing)[-3000:]
    name = refusing["metadata"]["name"]
    wait_for(
        lambda: scene.containers(name)[name][1] >= 1,
        timeout=120,
        what="the refusing plugin restarted (it exits every time)",
    )
    # Not `ready`: the refusing pod can read READY for a moment between its restarts, because
    # its readiness probe reaches HEAD's health port (host network; gRPC binds with
    # SO_REUSEPORT, so both pods' servers share it). What keeps the rollout from counting it is
    # that it exits each time, well inside minReadySeconds, so it is never available.
    [status] = scene.cluster.read_pod(name, NAME)["status"]["containerStatuses"]
    assert status["lastState"]["terminated"]["exitCode"] != 0, status
    head = scene.plugin(HEAD_TAG)
    assert head is not None
    assert head["status"]["containerStatuses"][0]["ready"], head
    held["during-downgrade"] = scene.start("during-downgrade")  # prepared by HEAD's pod
    assert scene.containers(*containers) == containers
    assert scene.versions()[0] == V2
    return held


def downgraded_once_drained(scene: Scene, held: dict[str, str]) -> None:
    """The node drained through HEAD's pod leaves a version-1 checkpoint with no claims; the
    release's pod, started again, completes the rollout and prepares a new pod."""
    for pod, uid in held.items():
        scene.stop(pod, uid)
    assert scene.claims() == set()
    # HEAD's pod leaves the drained form a moment after the last unprepare (DRAIN_AFTER_S).
    wait_for(lambda: scene.versions() == [V1], timeout=30, what="the drained checkpoint")
    refusing = scene.plugin(scene.shipped.tag)
    if refusing is not None:  # skip its restart back-off: the DaemonSet makes a new one
        scene.cluster.delete_pod(refusing["metadata"]["name"], NAME)
    plugin = scene.only_plugin()
    assert plugin["spec"]["containers"][0]["image"].endswith(f":{scene.shipped.tag}")
    assert "Traceback" not in scene.plugin_log(plugin)
    uid = scene.start("on-the-release-again")
    assert scene.claims() == {uid}
    assert set(scene.versions()) == {V1}, scene.versions()
