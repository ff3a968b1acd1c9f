"""The kubelet-call port with Events around it: a prepare that fails for a reason the claim's
owner can act on (domain/events.py) puts a Warning Event on the claim, through the non-blocking
sink, so `kubectl describe resourceclaim` says why the pod does not start."""

from collections.abc import Mapping, Sequence

from npu_dra.app.services.event_sink import EventSink
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.events import prepare_failure_event
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.ports import CallerGone, NodeClaims
from npu_dra.domain.prepare import ClaimOutcome


class ClaimFailureEvents:
    def __init__(self, inner: NodeClaims, sink: EventSink) -> None:
        self._inner = inner
        self._sink = sink

    def prepare(
        self, refs: Sequence[ClaimRef], caller_gone: CallerGone | None = None
    ) -> Mapping[ClaimUID, ClaimOutcome]:
        outcomes = self._inner.prepare(refs, caller_gone)
        for ref in refs:
            outcome = outcomes.get(ref.uid)
            if outcome is not None and outcome.error is not None:
                event = prepare_failure_event(ref, outcome.error)
                if event is not None:
                    self._sink.emit(event)
        return outcomes

    def unprepare(self, refs: Sequence[ClaimRef]) -> Mapping[ClaimUID, str | None]:
        return self._inner.unprepare(refs)
