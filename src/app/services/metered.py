"""The kubelet-call and probe ports with metrics around them, so the services they wrap stay
unaware of metrics: the composition root puts these in front of the real ones."""

import time
from collections.abc import Mapping, Sequence

from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.metrics import PluginMetrics, error_reason
from npu_dra.domain.ports import HardwareProbe, NodeClaims
from npu_dra.domain.prepare import ClaimOutcome

PREPARE = "NodePrepareResources"
UNPREPARE = "NodeUnprepareResources"


class MeteredNodeClaims:
    def __init__(self, inner: NodeClaims, metrics: PluginMetrics) -> None:
        self._inner = inner
        self._metrics = metrics

    def prepare(self, refs: Sequence[ClaimRef]) -> Mapping[ClaimUID, ClaimOutcome]:
        self._metrics.call_started(method=PREPARE)
        started = time.monotonic()
        reasons: list[str] = ["internal"]
        try:
            outcomes = self._inner.prepare(refs)
            reasons = [error_reason(o.error) for o in outcomes.values() if o.error is not None]
            return outcomes
        finally:
            self._metrics.call_done(
                method=PREPARE, seconds=time.monotonic() - started, error_reasons=reasons
            )

    def unprepare(self, refs: Sequence[ClaimRef]) -> Mapping[ClaimUID, str | None]:
        self._metrics.call_started(method=UNPREPARE)
        started = time.monotonic()
        reasons: list[str] = ["internal"]
        try:
            errors = self._inner.unprepare(refs)
            reasons = [error_reason(e) for e in errors.values() if e is not None]
            return errors
        finally:
            self._metrics.call_done(
                method=UNPREPARE, seconds=time.monotonic() - started, error_reasons=reasons
            )


class MeteredProbe:
    def __init__(self, inner: HardwareProbe, metrics: PluginMetrics, *, backend: str) -> None:
        self._inner = inner
        self._metrics = metrics
        self._backend = backend

    def probe(self) -> NodeInventory:
        started = time.monotonic()
        ok = False
        try:
            found = self._inner.probe()
            ok = True
            return found
        finally:
            seconds = time.monotonic() - started
            self._metrics.probe_done(backend=self._backend, seconds=seconds, ok=ok)
