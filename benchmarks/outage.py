"""The kubelet's calls while many pods' new claims wait on an API server that is down: the plugin
process on a fake 910B4 node against a real Kubernetes v1.34.3 API server reached through the
fault suite's toxic proxy (tests/faults), with a token bound to its stand-in pod.

For each outage (every connection reset; a hung server that holds every request) and each load
of 16, 32 and 64 pods' NodePrepareResources of new claims waiting at once (each on its own
connection, until the API comes back or --claim-fetch-timeout, 20 s, its default), the
latencies, min / median / p99 / max, of the calls that never need the API, made meanwhile by four
callers at once as the kubelet and the pod's probe would: NodePrepareResources of an
already-prepared claim, NodeUnprepareResources of a checkpointed claim, the registration
socket's GetInfo, and the liveness Check on the healthcheck port (SERVING counted). Every load
is repeated NPU_DRA_BENCH_OUTAGE_ROUNDS times (default 5), the API back in between.

Then a hung server that lost the requests it held comes back: how long a new claim's prepare
takes while the 64 reads stuck in the old requests still wait for their answer.

All of it twice: with one-instance socket names, and with per-pod names (`--seamless-upgrade on`,
the chart's default on a 1.33+ kubelet), where state steps also take the lock two instances share
(app/services/instance_state_lock.py).

Run from the repository root: `python -m benchmarks.outage`.
"""

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator

from benchmarks.faults import _plane
from tests.faults.harness import SOCKET_MODES, FaultNode, create_claims, fault_node, through
from tests.faults.test_outage_isolation import (
    LosingProxy,
    Ports,
    liveness,
    most_in_flight,
    start_observed,
    stuck_prepares,
    wait_until,
)
from tests.support.controlplane import ControlPlane
from tests.support.kubelet import DraClient, WireClaim, get_info, wait_for_registration_socket

PODS = (16, 32, 64)
ROUNDS = max(1, int(os.environ.get("NPU_DRA_BENCH_OUTAGE_ROUNDS", "5")))
SAMPLE_S = 2.0  # per round, while every new claim's prepare waits
PAUSE_S = 0.02  # between one caller's calls
CALLS = (
    "prepare of a prepared claim",
    "unprepare of a checkpointed claim",
    "GetInfo (the kubelet's 1 s timeout)",
    "liveness Check (SERVING)",
)
OUTAGES = ("every connection reset", "a hung API server")
LEAVING = 5  # checkpointed claims unprepared per round (npu-1..5), prepared again after it


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _ms(samples: list[float]) -> str:
    return (
        f"min {min(samples) * 1e3:.1f} / median {_percentile(samples, 0.5) * 1e3:.1f} / "
        f"p99 {_percentile(samples, 0.99) * 1e3:.1f} / max {max(samples) * 1e3:.1f} ms "
        f"({len(samples)} calls)"
    )


@contextlib.contextmanager
def _waiting(node: FaultNode, kind: str, endpoint: str, claims: list[WireClaim]) -> Iterator[None]:
    """The outage, and every claim's prepare sent into it; the API comes back before the
    prepares are waited for."""
    down, up = (
        (node.proxy.go_down, node.proxy.come_back)
        if kind == OUTAGES[0]
        else (node.proxy.pause, node.proxy.resume)
    )
    down()
    try:
        with stuck_prepares(endpoint, claims):
            try:
                yield
            finally:
                up()
    finally:
        up()


class Callers:
    """The four callers at once, each timing its calls and counting those that went wrong."""

    def __init__(self, node: FaultNode, dra: DraClient, ports: Ports) -> None:
        self.node, self.dra, self.ports = node, dra, ports
        self.times: dict[str, list[float]] = {what: [] for what in CALLS}
        self.failures: dict[str, int] = dict.fromkeys(CALLS, 0)

    def run(self, ready: WireClaim, leaving: list[WireClaim]) -> None:
        registration = wait_for_registration_socket(self.node.host.registry)
        left = list(leaving)

        def again() -> bool:
            return not self.dra.prepare([ready], timeout=45).claims[ready.uid].error

        def gone() -> bool:
            claim = left.pop()
            return not self.dra.unprepare([claim], timeout=45).claims[claim.uid].error

        callers = [
            ("prepare of a prepared claim", again, 10**6),
            ("unprepare of a checkpointed claim", gone, len(leaving)),
            (
                "GetInfo (the kubelet's 1 s timeout)",
                lambda: bool(get_info(registration).name),
                10**6,
            ),
            ("liveness Check (SERVING)", lambda: liveness(self.ports.liveness) == "", 10**6),
        ]
        end = time.monotonic() + SAMPLE_S
        threads = [threading.Thread(target=self._calls, args=(*c, end)) for c in callers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _calls(self, what: str, call: Callable[[], bool], most: int, end: float) -> None:
        """Up to `most` calls, spread over the time left until `end`."""
        pause = max(PAUSE_S, (end - time.monotonic()) / most)
        for _ in range(most):
            if time.monotonic() >= end:
                return
            began = time.perf_counter()
            try:
                ok = call()
            except Exception:
                ok = False
            self.times[what].append(time.perf_counter() - began)
            self.failures[what] += not ok
            time.sleep(pause)

    def report(self, title: str) -> None:
        print(title)
        for what, samples in self.times.items():
            failed = self.failures[what]
            print(f"  {what}: {_ms(samples)}" + (f", {failed} FAILED" if failed else ""))


def _isolation(plane: ControlPlane, sockets: str) -> None:
    with fault_node(plane, "bench-isolation") as node:
        node.fetch_timeout_s, node.sockets = 20.0, sockets
        ready = create_claims(node, [[f"npu-{i}"] for i in range(1 + LEAVING)])
        fresh = create_claims(
            node, [[f"npu-{6 + i % 2}"] for i in range(max(PODS))], prefix="new", workers=16
        )
        ports = start_observed(node)
        with node.kubelet() as dra:
            dra.prepare(ready, timeout=30)
            for kind in OUTAGES:
                for pods in PODS:
                    callers, admitted = Callers(node, dra, ports), []
                    for _ in range(ROUNDS):
                        with _waiting(node, kind, dra.endpoint, fresh[:pods]):
                            admitted.append(most_in_flight(ports.metrics, pods))
                            callers.run(ready[0], ready[1:])
                        dra.prepare(ready[1:], timeout=30)  # the API is back
                        dra.unprepare(fresh[:pods], timeout=30)
                    callers.report(
                        f"{sockets} sockets, outage ({kind}), {pods} new claims' prepares waiting "
                        f"(running at once: "
                        f"{min(admitted)}-{max(admitted)} of {pods}):"
                    )


def _recovery(plane: ControlPlane, sockets: str) -> None:
    with fault_node(plane, "bench-recovery") as node, LosingProxy(node.proxy.port) as losing:
        through(node.kubeconfig, losing)
        node.fetch_timeout_s, node.sockets = 20.0, sockets
        fresh = create_claims(
            node, [[f"npu-{1 + i % 7}"] for i in range(max(PODS))], prefix="lost", workers=16
        )
        late = create_claims(node, [["npu-0"]], prefix="late")
        ports = start_observed(node)
        with node.kubelet() as dra:
            losing.hang()
            with stuck_prepares(dra.endpoint, fresh):
                most_in_flight(ports.metrics, max(PODS))
                wait_until(lambda: losing.lost >= max(PODS))
                losing.recover()
                began = time.perf_counter()
                answer = dra.prepare(late, timeout=45).claims[late[0].uid]
                elapsed = time.perf_counter() - began
    verdict = "prepared" if not answer.error else f"FAILED: {answer.error[:80]}"
    print(
        f"{sockets} sockets, a hung API server back, the requests it held lost: a new claim's "
        f"prepare while "
        f"{max(PODS)} reads still wait in them: {elapsed * 1e3:.1f} ms ({verdict})"
    )


def main() -> None:
    with _plane() as plane:
        for sockets in SOCKET_MODES:
            _isolation(plane, sockets)
            _recovery(plane, sockets)


if __name__ == "__main__":
    main()
