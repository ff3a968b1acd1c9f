"""Every watch of the plugin against a server that ends it at once or fails it: the DaemonSet
watch (uninstall), the pod watch of --claim-prefetch and the ResourceSlice watch, each built by
the kube adapter as the plugin builds it, over the real kubernetes client, against a scripted
server (scripted_api.py) that counts what it is asked.

A watch the server ends at once with an empty 200 (no event, no error) was reopened at once: on
the 2-core test machine about 650 watch requests a second and 70 % of a core for one watch. Now
it backs off as a failure does (client-go's reflector calls it a "very short watch"), says so in
the log, and says it less often as it repeats. The prefetch's pod watch (prefetch × watch
errors) keeps the claims it read across a reopen or a list again, instead of reading each of
them again every time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from npu_dra.adapters.cluster.kube import list_watch
from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.cluster.kube.daemonset_watch import daemonset_watch
from npu_dra.adapters.cluster.kube.node_pods import node_pod_watch
from npu_dra.adapters.cluster.kube.watch import slice_watch
from npu_dra.app.services.claim_prefetch import ClaimPrefetch
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimName, ClaimUID, DriverName, Namespace, NodeName
from npu_dra.domain.ports import Stoppable
from tests.faults.scripted_api import EMPTY, EXPIRED, REFUSED, ScriptedApi

NODE, DRIVER = NodeName("n1"), DriverName("npu.huawei.com")
DAEMONSETS = "/apis/apps/v1/namespaces/npu-dra/daemonsets"
PODS = "/api/v1/pods"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
CLAIM = "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/trainer-npu"
POD_UID, CLAIM_UID = "5b1f0c1e-pod", "9d2e7a40-claim"
WAIT_S = 10.0  # how long a test waits for what it expects before it fails


def _until(done: Callable[[], bool], what: Callable[[], str]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not done():
        assert time.monotonic() < deadline, what()
        time.sleep(0.01)


Opener = Callable[[ScriptedApi], Stoppable]
WATCHES: dict[str, tuple[str, Opener]] = {
    "daemonset": (
        DAEMONSETS,
        lambda api: daemonset_watch(
            api.api_client(), namespace="npu-dra", name="plugin", on_report=lambda _: None
        ),
    ),
    "pods": (
        PODS,
        lambda api: node_pod_watch(
            api.api_client(), node=NODE, on_list=lambda _: None, on_pod=lambda _: None
        ),
    ),
    "slices": (
        SLICES,
        lambda api: slice_watch(
            api.api_client(), selector=f"spec.nodeName={NODE}", on_change=lambda: None
        ),
    ),
}


@pytest.fixture
def api() -> Iterator[ScriptedApi]:
    with ScriptedApi() as scripted:
        for path in (DAEMONSETS, PODS, SLICES):
            scripted.lists[path] = []
        yield scripted


def _ended_at_once(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == list_watch.__name__ and "ended the watch at once" in r.getMessage()
    ]


@pytest.mark.parametrize("which", WATCHES)
def test_every_watch_backs_off_when_the_server_ends_it_at_once(
    which: str,
    api: ScriptedApi,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first wait is an hour here: once the watch says it backs off, the server has seen
    one watch, and no other until the wait is over (the test stops it first)."""
    monkeypatch.setattr(list_watch, "FIRST_BACKOFF_S", 3600.0)
    monkeypatch.setattr(list_watch, "MAX_BACKOFF_S", 3600.0)
    path, open_watch = WATCHES[which]
    caplog.set_level(logging.INFO, logger=list_watch.__name__)
    watch = open_watch(api)
    try:
        _until(
            lambda: bool(_ended_at_once(caplog)),
            lambda: f"no back-off said after {api.count(path, 'watch')} watch requests",
        )
        assert api.count(path, "watch") == 1
        assert api.count(path, "list") == 1  # nothing failed: it resumes, not lists again
    finally:
        watch.stop()
    [said] = _ended_at_once(caplog)
    assert "ended the watch at once" in said
    assert "reopening in" in said


def test_a_watch_ended_at_once_again_and_again_is_logged_less_and_less(
    api: ScriptedApi, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(list_watch, "FIRST_BACKOFF_S", 0.001)
    monkeypatch.setattr(list_watch, "MAX_BACKOFF_S", 0.002)
    caplog.set_level(logging.INFO, logger=list_watch.__name__)
    watch = WATCHES["daemonset"][1](api)
    try:
        _until(lambda: api.count(DAEMONSETS, "watch") >= 40, lambda: "the watch stopped")
    finally:
        watch.stop()
    said, watches = _ended_at_once(caplog), api.count(DAEMONSETS, "watch")
    # the 1st, 2nd, 4th, 8th ... time in a row: one line per power of two up to the count
    assert 6 <= len(said) <= watches.bit_length(), (watches, said)
    assert any("32 times in a row" in line for line in said)


# -- prefetch × watch errors ---------------------------------------------------------------------


def _bound_pod_and_its_claim(api: ScriptedApi) -> ClaimRef:
    api.lists[PODS] = [
        {
            "metadata": {"name": "trainer", "namespace": "ns", "uid": POD_UID},
            "spec": {"nodeName": NODE},
            "status": {
                "phase": "Pending",
                "resourceClaimStatuses": [{"name": "npu", "resourceClaimName": "trainer-npu"}],
            },
        }
    ]
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": POD_UID}
    api.objects[CLAIM] = _claim(owner)
    return ClaimRef(Namespace("ns"), ClaimName("trainer-npu"), ClaimUID(CLAIM_UID))


def _claim(owner: dict[str, Any]) -> dict[str, Any]:
    result = {"request": "npu", "driver": DRIVER, "pool": NODE, "device": "npu-0"}
    return {
        "metadata": {
            "name": "trainer-npu",
            "namespace": "ns",
            "uid": CLAIM_UID,
            "ownerReferences": [{**owner, "controller": True}],
        },
        "spec": {
            "devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": DRIVER}}]}
        },
        "status": {
            "reservedFor": [{"resource": "pods", "name": "trainer", "uid": POD_UID}],
            "allocation": {"devices": {"results": [result]}},
        },
    }


@pytest.mark.parametrize(
    "answer", [EMPTY, EXPIRED, REFUSED], ids=["ended-at-once", "expired-410", "refused-500"]
)
def test_prefetch_keeps_its_claims_across_watch_errors(
    answer: bytes | int, api: ScriptedApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every reopen (after an error, a list again) finds the same pod bound and running: its
    claim, read once, is kept, and the prepare still finds it."""
    monkeypatch.setattr(list_watch, "FIRST_BACKOFF_S", 0.001)
    monkeypatch.setattr(list_watch, "MAX_BACKOFF_S", 0.002)
    ref = _bound_pod_and_its_claim(api)
    api.watch_answer = lambda _: answer
    prefetch = ClaimPrefetch(KubeCluster(api.api_client()), node=NODE, driver=DRIVER)
    watch = prefetch.watch()
    try:
        _until(lambda: api.count(PODS, "watch") >= 5, lambda: "the pod watch stopped")
    finally:
        watch.stop()
    claim = prefetch.take(ref)  # waits for a read still under way
    assert claim is not None
    assert claim.ref == ref
    assert api.count(CLAIM, "get") == 1, "the claim was read again on a reopen"
