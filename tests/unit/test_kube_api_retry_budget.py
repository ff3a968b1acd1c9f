"""with_retries: the first try runs without building tenacity's loop; what happens after a
failure is unchanged: transient failures are retried within the budget, then ClusterUnavailable;
an answer asking again cannot change is ApiRefused at once; any other error is raised as is."""

import time

import pytest
import tenacity
from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube import retry
from npu_dra.adapters.cluster.kube.retry import ApiRefused, Deadline, with_retries
from npu_dra.domain.errors import ClusterUnavailable


def test_a_first_try_that_succeeds_builds_no_retry_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_loop(*_: object, **__: object) -> None:
        raise AssertionError("tenacity.Retrying built for a call that succeeded at once")

    monkeypatch.setattr(tenacity, "Retrying", no_loop)
    seen: list[float] = []

    def call(deadline: Deadline) -> str:
        seen.append(deadline.remaining())
        return "answer"

    assert with_retries("x", call, budget_s=10) == "answer"
    assert len(seen) == 1
    assert 9 < seen[0] <= 10


def test_a_transient_first_failure_is_retried_and_heard_once_per_retry() -> None:
    tries: list[float] = []
    heard: list[str] = []

    def call(_: Deadline) -> str:
        tries.append(time.monotonic())
        if len(tries) < 3:
            raise ApiException(status=503, reason="unavailable")
        return "answer"

    assert with_retries("x", call, budget_s=10, on_retry=lambda: heard.append("r")) == "answer"
    assert len(tries) == 3
    assert heard == ["r", "r"]
    assert tries[1] - tries[0] >= 0.1  # the first retry waits like the others


def test_transient_failures_past_the_budget_are_cluster_unavailable_within_it() -> None:
    began = time.monotonic()

    def call(_: Deadline) -> str:
        raise ConnectionError("refused")

    with pytest.raises(ClusterUnavailable, match="reading x: still failing after 1s"):
        with_retries("reading x", call, budget_s=1)
    assert time.monotonic() - began < 1.5


def test_a_refusal_is_reported_at_once_and_other_errors_as_they_are() -> None:
    calls: list[int] = []

    def forbidden(_: Deadline) -> str:
        calls.append(1)
        raise ApiException(status=403, reason="Forbidden")

    with pytest.raises(ApiRefused, match="HTTP 403 Forbidden"):
        with_retries("x", forbidden, budget_s=10)
    assert calls == [1]

    def bug(_: Deadline) -> str:
        raise KeyError("metadata")

    with pytest.raises(KeyError) as raised:
        with_retries("x", bug, budget_s=10)
    assert raised.value.__cause__ is None  # raised as it was, not chained to itself
    assert retry.is_transient(ConnectionError())
    assert not retry.is_transient(KeyError())
