"""benchmarks/pod_start.py's stopwatch: pods created through the API (no kubectl process in the
timed span) and their first Running seen on a pod watch, timed with time.perf_counter; then
deleted, untimed, down to their ResourceClaims, so that each timed pod starts on a quiet node."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client, watch

from tests.support.controlplane import api_client_for, wait_for
from tests.support.node import SEED_IMAGE

NAMESPACE = "ascend-dra"
LABEL = ("bench", "pod-start")
RUNNING_TIMEOUT_S = 120.0
GONE_TIMEOUT_S = 90.0
# The container exits on SIGTERM at once (busybox `sleep` as PID 1 would wait out the grace).
COMMAND = ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]


def pod(
    name: str, *, template: str | None = None, limits: dict[str, str] | None = None
) -> dict[str, Any]:
    """The one pod shape every contender runs: one busybox container, and either one claim from
    `template` or the extended resource `limits` (the classic device plugin)."""
    container: dict[str, Any] = {
        "name": "app",
        "image": SEED_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "command": COMMAND,
    }
    spec: dict[str, Any] = {"terminationGracePeriodSeconds": 1, "containers": [container]}
    if template is not None:
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": template}]
        container["resources"] = {"claims": [{"name": "dev"}]}
    if limits is not None:
        container["resources"] = {"limits": limits}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": dict([LABEL])},
        "spec": spec,
    }


@dataclass
class Contender:
    """One column: a label and how its pod named `name` looks."""

    label: str
    prefix: str
    manifest: Callable[[str], dict[str, Any]]


class PodClock:
    """Watches this benchmark's pods (its own client, in a thread) and notes the perf_counter
    instant each is first seen Running; `start` creates a pod and returns its creation instant."""

    def __init__(self, kubeconfig: Path, diagnose: Callable[[str], str]) -> None:
        self._client = api_client_for(kubeconfig)
        self._watched = client.CoreV1Api(self._client)
        self._core = client.CoreV1Api(api_client_for(kubeconfig))
        self._diagnose = diagnose
        self._running: dict[str, float] = {}
        self._changed = threading.Condition()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="pod-clock", daemon=True)

    def __enter__(self) -> PodClock:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopped.set()

    def _watch(self) -> None:
        """Raw events (no model decoding), resumed from the last version seen."""
        version: str | None = None
        while not self._stopped.is_set():
            try:
                for event in watch.Watch().stream(  # type: ignore[no-untyped-call]
                    self._watched.list_namespaced_pod,
                    NAMESPACE,
                    label_selector="=".join(LABEL),
                    resource_version=version,
                    timeout_seconds=30,
                    deserialize=False,
                ):
                    version = self._seen(event["type"], event["object"])
            except Exception:  # 410 Gone, or the API server going away at the end
                version = None
                time.sleep(0.05)

    def _seen(self, kind: str, found: dict[str, Any]) -> str | None:
        if kind != "DELETED" and found.get("status", {}).get("phase") == "Running":
            instant = time.perf_counter()
            with self._changed:
                self._running.setdefault(found["metadata"]["name"], instant)
                self._changed.notify_all()
        version = found.get("metadata", {}).get("resourceVersion")
        return str(version) if version else None

    def start(self, manifest: dict[str, Any]) -> float:
        body = client.V1Pod.from_dict(manifest)
        if body is None:
            raise ValueError(f"not a pod: {manifest}")
        started = time.perf_counter()
        self._core.create_namespaced_pod(NAMESPACE, body)
        return started

    def running(self, names: list[str]) -> dict[str, float]:
        """The instant each of `names` was first seen Running (waits for all of them)."""
        deadline = time.monotonic() + RUNNING_TIMEOUT_S
        with self._changed:
            while missing := [n for n in names if n not in self._running]:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"pod {missing[0]} not Running in {RUNNING_TIMEOUT_S:.0f} s\n"
                        + self._diagnose(missing[0])
                    )
                self._changed.wait(timeout=left)
            return {n: self._running[n] for n in names}

    def time_to_running(self, manifests: list[dict[str, Any]]) -> list[float]:
        """Creates the pods back to back, each timed from its own creation; then deletes them."""
        names = [m["metadata"]["name"] for m in manifests]
        try:
            started = {n: self.start(m) for n, m in zip(names, manifests, strict=True)}
            running = self.running(names)
            return [running[n] - started[n] for n in names]
        finally:
            self.delete(names)

    def delete(self, names: list[str]) -> None:
        """Deletes the pods; waits until the kubelet is done with them and their claims are gone."""
        for name in names:
            with contextlib.suppress(client.ApiException):
                self._core.delete_namespaced_pod(name, NAMESPACE, grace_period_seconds=1)
        resource = client.ResourceV1Api(self._core.api_client)

        def quiet() -> bool:
            pods = self._core.list_namespaced_pod(NAMESPACE, label_selector="=".join(LABEL))
            left = {p.metadata.name for p in pods.items if p.metadata} & set(names)
            return not left and not resource.list_namespaced_resource_claim(NAMESPACE).items

        wait_for(
            quiet, timeout=GONE_TIMEOUT_S, what=f"{names} and their claims gone", interval=0.02
        )


@contextlib.contextmanager
def pod_clock(kubeconfig: Path, diagnose: Callable[[str], str]) -> Iterator[PodClock]:
    with PodClock(kubeconfig, diagnose) as clock:
        yield clock
