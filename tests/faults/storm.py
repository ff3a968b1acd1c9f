"""kill -9 at random points of a prepare/unprepare storm, with a consistency check after every
restart (a library: tests/faults/test_kill_storm.py runs a few points, benchmarks/faults.py 200).

The storm plays the kubelet: it keeps what it was told (claims prepared, with their devices),
and when a call is cut off by the kill it sends the same call again after the restart, as the
kubelet does, before it trusts anything about that claim. After each restart the checker reads
the disk: the checkpoint loads, every claim the kubelet was told is prepared is in it, no NPU is
held by two claims (on disk or in the answers), no CDI spec lacks its checkpoint entry, and no
temp file is left.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass, field

import grpc

from tests.faults.harness import FaultNode, check
from tests.support.kubelet import DraClient, WireClaim

CALL_TIMEOUT_S = 30.0


@dataclass
class Kubelet:
    """What the kubelet believes, and the call the kill interrupted (sent again on restart)."""

    held: dict[str, tuple[str, ...]] = field(default_factory=dict)  # uid -> devices
    interrupted: tuple[str, list[WireClaim]] | None = None
    double: list[str] = field(default_factory=list)

    def send(self, dra: DraClient, op: str, claims: list[WireClaim]) -> None:
        self.interrupted = (op, claims)
        if op == "prepare":
            answer = dra.prepare(claims, timeout=CALL_TIMEOUT_S)
            for uid, result in answer.claims.items():
                if not result.error:
                    self._granted(uid, tuple(d.device_name for d in result.devices))
        else:
            answer = dra.unprepare(claims, timeout=CALL_TIMEOUT_S)
            for uid, result in answer.claims.items():
                if not result.error:
                    self.held.pop(uid, None)
        self.interrupted = None

    def _granted(self, uid: str, devices: tuple[str, ...]) -> None:
        for other, theirs in self.held.items():
            if other != uid and set(theirs) & set(devices):
                self.double.append(f"{uid} and {other} both told they hold {devices}")
        self.held[uid] = devices


@dataclass
class StormReport:
    kills: int = 0
    calls: int = 0
    totals: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.problems and not any(self.totals.values())


def storm(
    node: FaultNode, claims: list[WireClaim], *, kills: int, seed: int, window_s: float = 0.6
) -> StormReport:
    rng = random.Random(seed)
    kubelet = Kubelet()
    report = StormReport()
    for _ in range(kills):
        node.start()
        with node.kubelet() as dra:
            if kubelet.interrupted is not None:  # the kubelet retries the call it lost
                kubelet.send(dra, *kubelet.interrupted)
            _record(report, node, kubelet)
            stop = threading.Event()
            worker = threading.Thread(
                target=_calls,
                args=(dra, kubelet),
                kwargs={"claims": claims, "rng": rng, "stop": stop, "report": report},
                daemon=True,
            )
            worker.start()
            stop.wait(rng.uniform(0.02, window_s))
            assert node.plugin is not None
            node.plugin.kill()
            report.kills += 1
            stop.set()
            worker.join(timeout=CALL_TIMEOUT_S)
    node.start()
    with node.kubelet() as dra:
        if kubelet.interrupted is not None:
            kubelet.send(dra, *kubelet.interrupted)
        _record(report, node, kubelet)
    report.totals["double-prepared"] += len(kubelet.double)
    report.problems += kubelet.double
    return report


def _calls(
    dra: DraClient,
    kubelet: Kubelet,
    *,
    claims: list[WireClaim],
    rng: random.Random,
    stop: threading.Event,
    report: StormReport,
) -> None:
    while not stop.is_set():
        op = rng.choice(("prepare", "unprepare"))
        chosen = rng.sample(claims, rng.randint(1, 3))
        try:
            kubelet.send(dra, op, chosen)
        except grpc.RpcError:
            return  # killed mid-call: `interrupted` stays set
        report.calls += 1


def _record(report: StormReport, node: FaultNode, kubelet: Kubelet) -> None:
    """Check the disk now that the restarted plugin serves (its repair has run)."""
    found = check(node, set(kubelet.held))
    report.totals["unreadable checkpoints"] += int(not found.readable)
    report.totals["lost"] += len(found.lost)
    report.totals["double-prepared"] += len(found.double)
    report.totals["orphan specs"] += len(found.orphans)
    report.totals["temp files"] += len(found.temp_files)
    if not found.whole:
        report.problems.append(repr(found))
