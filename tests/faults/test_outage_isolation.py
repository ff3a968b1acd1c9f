"""The kubelet's other calls while many pods' new claims wait on an API server that is down.

During an outage (connections reset, or a hung server that never answers) the kubelet may send
NodePrepareResources for many pods with new claims at once; each of those waits for its claim
reads until `--claim-fetch-timeout`. Meanwhile the kubelet's other calls must be answered at
once: an already-prepared claim's prepare (from the checkpoint), an unprepare, the registration
socket's GetInfo (the kubelet's 1 s timeout), and the pod's liveness check (SERVING, or the
kubelet restarts the plugin mid-outage). Once a hung server is back, a new claim is read at once,
not after the reads still stuck in the old, lost requests.

"Did not wait" is asserted by order, not by a clock: every such call answered before the first
of the stuck prepares did (they answer at the fetch deadline, 20 s, the flag's default).
`python -m benchmarks.outage` prints the latencies.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.e2e.plugin_process import plugin_env
from tests.faults.harness import (
    SOCKET_MODES,
    FaultNode,
    PluginRun,
    create_claims,
    fault_node,
    through,
)
from tests.faults.toxic import CHUNK, ToxicProxy
from tests.support.controlplane import ControlPlane, free_port
from tests.support.kubelet import (
    DraClient,
    WireClaim,
    get_info,
    wait_for_registration_socket,
)

PODS = 64  # pods starting with new claims during the outage (the worst case)
ROUNDS = 4  # rounds of the kubelet's other calls while they wait
FETCH_DEADLINE_S = 20.0  # --claim-fetch-timeout's default
KUBELET_TIMEOUT_S = 45.0
ADMIT_WAIT_S = 15.0  # how long to wait for every stuck prepare to be running in the plugin
# A new claim's per-claim error when its read gave up: the call's deadline, or the read's own.
API_DOWN = re.compile(r"^claim .*(the API server did not answer|still failing after)")


class LosingProxy(ToxicProxy):
    """A hung API server that loses what reaches it while it hangs: between `hang()` and
    `recover()` every byte is swallowed (connections stay open, nothing is answered); afterwards
    new connections, and connections idle all along, flow again, but a connection that carried
    a request into the hang stays silent for good (as behind a server that restarted behind a
    load balancer)."""

    def __init__(self, upstream_port: int) -> None:
        super().__init__(upstream_port)
        self._hanging = False
        self._lost: set[socket.socket] = set()

    @property
    def lost(self) -> int:
        """Connections on which something was sent into the hang."""
        with self._lock:
            return len(self._lost) // 2

    def hang(self) -> None:
        with self._lock:
            self._hanging = True

    def recover(self) -> None:
        with self._lock:
            self._hanging = False

    def _swallowed(self, source: socket.socket, sink: socket.socket) -> bool:
        with self._lock:
            if self._hanging:
                self._lost.update((source, sink))
            return source in self._lost

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(CHUNK):
                if not self._swallowed(source, sink):
                    sink.sendall(data)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_RDWR)


@dataclass(frozen=True)
class Ports:
    liveness: int
    metrics: int


def start_observed(node: FaultNode) -> Ports:
    """The plugin as the suite starts it, plus its liveness and /metrics ports."""
    ports = Ports(free_port(), free_port())
    extra = [f"--healthcheck-port={ports.liveness}", f"--metrics-port={ports.metrics}"]
    argv = [a for a in node.argv() if not a.startswith("--healthcheck-port")]
    setpriv = shutil.which("setpriv")
    dies_with_us = [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []
    env = {**plugin_env(), "CLAIM_FETCH_TIMEOUT": str(node.fetch_timeout_s)}
    with node.host.log.open("ab") as log:
        popen = subprocess.Popen(
            [*dies_with_us, *argv, *extra],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    node.plugin = PluginRun(node, popen)
    return ports


def prepares_in_flight(metrics_port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as page:
        text = page.read().decode()
    found = re.search(
        r'^npu_dra_kubelet_calls_in_flight\{method="NodePrepareResources"\} (\S+)$', text, re.M
    )
    return int(float(found.group(1))) if found else 0


def most_in_flight(metrics_port: int, wanted: int) -> int:
    """The most prepares seen running at once, polled until `wanted` or ADMIT_WAIT_S."""
    most, deadline = 0, time.monotonic() + ADMIT_WAIT_S
    while most < wanted and time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            most = max(most, prepares_in_flight(metrics_port))
        time.sleep(0.05)
    return most


@dataclass(frozen=True)
class Answer:
    at: float  # time.monotonic() when it came
    outcome: str  # "" for OK, else the per-claim error or the gRPC status


@contextlib.contextmanager
def stuck_prepares(endpoint: str, claims: Sequence[WireClaim]) -> Iterator[list[Answer]]:
    """One kubelet call per claim, all at once, each on its own connection; waits for them all
    on exit."""
    answers: list[Answer] = []

    def prepare(claim: WireClaim) -> None:
        with DraClient(endpoint, "v1") as client:
            try:
                answer = client.prepare([claim], timeout=KUBELET_TIMEOUT_S).claims[claim.uid]
                outcome = answer.error or "prepared"
            except grpc.RpcError as error:
                outcome = error.code().name
        answers.append(Answer(time.monotonic(), outcome))

    threads = [threading.Thread(target=prepare, args=(c,), daemon=True) for c in claims]
    for thread in threads:
        thread.start()
    try:
        yield answers
    finally:
        for thread in threads:
            thread.join(timeout=KUBELET_TIMEOUT_S + 10)


def answered(what: str, call: Callable[[], str]) -> Answer:
    """`call`'s verdict ("" for as expected) named `what`, stamped when it came."""
    try:
        problem = call()
    except grpc.RpcError as error:
        problem = f"{error.code().name}: {error.details()}"
    return Answer(time.monotonic(), f"{what}: {problem}" if problem else "")


def liveness(port: int) -> str:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        check = stub.Check(health_pb2.HealthCheckRequest(service="liveness"), timeout=5)
    return "" if check.status == health_pb2.HealthCheckResponse.SERVING else "NOT_SERVING"


@dataclass
class Kubelet:
    """The kubelet's calls other than new claims' prepares, and their expected answers."""

    node: FaultNode
    dra: DraClient
    ports: Ports
    prepared: dict[str, object]  # uid -> the answer its first prepare got

    def round(self, ready: WireClaim, leaving: WireClaim) -> list[Answer]:
        registration = wait_for_registration_socket(self.node.host.registry)

        def again() -> str:
            answer = self.dra.prepare([ready], timeout=KUBELET_TIMEOUT_S).claims[ready.uid]
            return "" if answer == self.prepared[ready.uid] else f"answered {answer}"

        def gone() -> str:
            return (
                self.dra.unprepare([leaving], timeout=KUBELET_TIMEOUT_S).claims[leaving.uid].error
            )

        return [
            answered("prepare of a prepared claim", again),
            answered("unprepare", gone),
            answered("GetInfo", lambda: "" if get_info(registration).name else "no name"),
            answered("liveness", lambda: liveness(self.ports.liveness)),
        ]


def api_down(outcome: str) -> bool:
    return API_DOWN.search(outcome) is not None


def wait_until(condition: Callable[[], bool]) -> None:
    """Polls `condition` for at most ADMIT_WAIT_S (the assertions after say whether it held)."""
    deadline = time.monotonic() + ADMIT_WAIT_S
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def outage(node: FaultNode, mode: str) -> contextlib.AbstractContextManager[None]:
    return node.proxy.outage() if mode == "reset" else node.proxy.paused()


@pytest.mark.parametrize("sockets", SOCKET_MODES)
@pytest.mark.parametrize("mode", ["reset", "hung"])
def test_kubelet_calls_and_liveness_never_wait_for_new_claims_stuck_in_an_outage(
    access: ControlPlane, mode: str, sockets: str
) -> None:
    """Outage × socket names: with per-pod sockets (the chart's default), the lock two
    instances share covers state changes only, never a claim read."""
    with fault_node(access, "isolation") as node:
        node.fetch_timeout_s = FETCH_DEADLINE_S
        node.sockets = sockets
        ready = create_claims(node, [[f"npu-{i}"] for i in range(2 * ROUNDS)])
        fresh = create_claims(node, [[f"npu-{i % 8}"] for i in range(PODS)], prefix="new")
        ports = start_observed(node)
        with node.kubelet() as dra:
            kubelet = Kubelet(node, dra, ports, dict(dra.prepare(ready, timeout=30).claims))
            with outage(node, mode), stuck_prepares(dra.endpoint, fresh) as stuck:
                admitted = most_in_flight(ports.metrics, PODS)
                calls = [
                    answer
                    for i in range(ROUNDS)
                    for answer in kubelet.round(ready[i], ready[ROUNDS + i])
                ]

    assert admitted == PODS  # every new claim's prepare was running, none queued for a thread
    assert [c.outcome for c in calls if c.outcome] == []
    assert max(c.at for c in calls) < min(s.at for s in stuck)
    assert len(stuck) == PODS
    assert all(api_down(s.outcome) for s in stuck), {s.outcome for s in stuck}


def test_a_new_claim_after_a_hung_api_server_recovers_is_read_at_once(
    access: ControlPlane,
) -> None:
    with fault_node(access, "recovered") as node, LosingProxy(node.proxy.port) as losing:
        through(node.kubeconfig, losing)  # plugin -> losing -> the suite's proxy -> API server
        node.fetch_timeout_s = FETCH_DEADLINE_S
        fresh = create_claims(node, [[f"npu-{i % 8}"] for i in range(PODS)], prefix="lost")
        (late,) = create_claims(node, [["npu-0"]], prefix="late")
        ports = start_observed(node)
        with node.kubelet() as dra:
            losing.hang()
            try:
                with stuck_prepares(dra.endpoint, fresh) as stuck:
                    admitted = most_in_flight(ports.metrics, PODS)
                    wait_until(lambda: losing.lost >= PODS)
                    lost = losing.lost
                    losing.recover()
                    prepared = answered(
                        "late prepare",
                        lambda: (
                            dra.prepare([late], timeout=KUBELET_TIMEOUT_S).claims[late.uid].error
                        ),
                    )
            finally:
                losing.recover()

    assert admitted == PODS
    assert lost >= PODS  # the stuck reads' requests were lost with the hang
    assert prepared.outcome == ""
    assert prepared.at < min(s.at for s in stuck)  # it did not wait for them
    assert all(api_down(s.outcome) for s in stuck), {s.outcome for s in stuck}
