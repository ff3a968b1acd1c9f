"""What the services count, asserted on the in-memory recorder's state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.metrics.memory import MemoryMetrics
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer
from npu_dra.app.services.metered import PREPARE, UNPREPARE, MeteredNodeClaims
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import ClaimName, ClaimUID, Namespace, NodeName
from npu_dra.domain.metrics import REASONS, error_reason
from npu_dra.domain.ports import CallerGone
from npu_dra.domain.prepare import ClaimOutcome
from tests.unit.app.test_maintainer import FlakyPublisher

REF = ClaimRef(Namespace("team-a"), ClaimName("train"), ClaimUID("uid-1"))


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            "claim team-a/x (u): request 'npu', device 'npu-7': device is Critical",
            "device_unhealthy",
        ),
        ("claim team-a/x (u) is not allocated", "not_allocated"),
        ("claim team-a/x (u): ResourceClaim team-a/x not found", "claim_not_found"),
        (
            "claim t/x (u): the API server did not answer within 20s; not prepared",
            "api_unavailable",
        ),
        ("claim t/x (u), request 'npu': no such device on node 'n'", "device_not_on_node"),
        ("claim t/x (u), device 'npu-1': already prepared for claim v", "device_in_use"),
        ("something nobody foresaw", "other"),
    ],
)
def test_an_error_message_is_counted_under_one_word_of_a_fixed_set(
    message: str, reason: str
) -> None:
    assert error_reason(message) == reason
    assert reason in REASONS


class Claims:
    """A NodeClaims that answers as told, or raises."""

    def __init__(self, error: str | None = None, raises: bool = False) -> None:
        self.error = error
        self.raises = raises

    def prepare(
        self, refs: Sequence[ClaimRef], caller_gone: CallerGone | None = None
    ) -> Mapping[ClaimUID, ClaimOutcome]:
        if self.raises:
            raise RuntimeError("a bug")
        return {r.uid: ClaimOutcome(error=self.error) for r in refs}

    def unprepare(self, refs: Sequence[ClaimRef]) -> Mapping[ClaimUID, str | None]:
        return {r.uid: self.error for r in refs}


def test_each_call_is_counted_with_its_claims_error_reasons_and_leaves_nothing_in_flight() -> None:
    metrics = MemoryMetrics()
    claims = MeteredNodeClaims(Claims(error="device is Unhealthy"), metrics)
    claims.prepare([REF])
    claims.unprepare([REF])
    assert [(c.method, c.error_reasons) for c in metrics.calls] == [
        (PREPARE, ("device_unhealthy",)),
        (UNPREPARE, ("device_unhealthy",)),
    ]
    assert metrics.in_flight == 0


def test_a_call_that_raises_is_counted_as_internal_and_the_error_goes_on() -> None:
    metrics = MemoryMetrics()
    with pytest.raises(RuntimeError):
        MeteredNodeClaims(Claims(raises=True), metrics).prepare([REF])
    assert [c.error_reasons for c in metrics.calls] == [("internal",)]
    assert metrics.in_flight == 0


def test_the_maintainer_counts_failed_and_good_publishes() -> None:
    metrics = MemoryMetrics()
    publisher = FlakyPublisher([ClusterUnavailable("down")] * 2)
    worker = PoolMaintainer(
        inventory=InventoryCache(FakeHardware({"chip": "910B4", "count": 2}, node=NodeName("n"))),
        publisher=publisher,  # type: ignore[arg-type]
        interval_s=3600.0,
        retry_s=0.01,
        metrics=metrics,
        backend="fake",
    )
    worker.start()
    try:
        assert worker.wait_published(timeout=10)
    finally:
        worker.stop()
    assert metrics.publishes[:3] == [False, False, True]
