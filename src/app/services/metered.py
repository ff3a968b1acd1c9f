"""The kubelet-call port with metrics around it, so the preparer stays unaware of metrics: the
composition root puts this in front of the real one. (Probes are timed by the pool maintainer,
the health monitor that runs them.)"""

import time
from collections.abc import Mapping, Sequence

from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.metrics import PluginMetrics, error_reason
from npu_dra.domain.ports import CallerGone, NodeClaims
from npu_dra.domain.prepare import ClaimOutcome

PREPARE = "NodePrepareResources"
UNPREPARE = "NodeUnprepareResources"


class MeteredNodeClaims:
    def __init__(self, inner: NodeClaims, metrics: PluginMetrics) -> None:
        self._inner = inner
        self._metrics = metrics

    def prepare(
        self, refs: Sequence[ClaimRef], caller_gone: CallerGone | None = None
    ) -> Mapping[ClaimUID, ClaimOutcome]:
        self._metrics.call_started(method=PREPARE)
        started = time.monotonic()
        reasons: list[str] = ["internal"]
        try:
            outcomes = self._inner.prepare(refs, caller_gone)
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
