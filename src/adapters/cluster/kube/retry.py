"""Which API failures are worth retrying, and for how long.

Connection errors, timeouts, 429 and 5xx are transient; 409 conflicts (and objects deleted
between our read and our write) mean someone else wrote first, so the whole read-plan-write step
is retried. The budget is a deadline, not a count: every
request's timeout is cut to the time left and no wait sleeps past it, so a hung API server costs
the caller the budget, not a multiple of it. Then ClusterUnavailable says what kept failing. Other
answers (403, 422...) cannot change by asking again: they are reported at once as ApiRefused,
with the server's message, because retrying a 403 only hides RBAC bugs.
"""

import json
import time
from collections.abc import Callable
from typing import NoReturn, TypeVar

import tenacity
import urllib3.exceptions
from kubernetes.client import ApiException

from npu_dra.domain.errors import ClusterUnavailable

T = TypeVar("T")
TRANSIENT_STATUS = frozenset({0, 408, 409, 429, 500, 502, 503, 504})
REQUEST_TIMEOUT_S = 30.0
MIN_REQUEST_TIMEOUT_S = 0.05
# Short waits between tries: a refused connection costs nothing, and a caller waiting on the API
# (a publish during an outage) should get through within a few tenths of a second of its return.
MAX_WAIT_S = 0.25


class ApiRefused(ClusterUnavailable):
    """The API server answered with an error that retrying cannot fix (403, 422...)."""


class StaleRead(Exception):
    """Something we read and meant to change is gone: read again (retried like a 409)."""


class Deadline:
    def __init__(self, budget_s: float) -> None:
        self._end = time.monotonic() + budget_s

    def remaining(self) -> float:
        return max(self._end - time.monotonic(), 0.0)

    def timeout(self) -> float:
        """One request's timeout (connect to last byte): the time left, at most 30 s."""
        return max(min(REQUEST_TIMEOUT_S, self.remaining()), MIN_REQUEST_TIMEOUT_S)


def is_transient(error: BaseException) -> bool:
    if isinstance(error, ApiException):
        return error.status in TRANSIENT_STATUS
    transient = (urllib3.exceptions.HTTPError, ConnectionError, TimeoutError, StaleRead)
    return isinstance(error, transient)


def describe(error: BaseException) -> str:
    if isinstance(error, ApiException):
        return f"HTTP {error.status} {error.reason}{_server_message(error)}"
    return f"{type(error).__name__}: {error}"


def _server_message(error: ApiException) -> str:
    try:
        message = json.loads(error.body or "{}").get("message")
    except (ValueError, AttributeError):
        return ""
    return f": {message}" if message else ""


def with_retries(
    what: str,
    call: Callable[[Deadline], T],
    *,
    budget_s: float,
    on_retry: Callable[[], None] | None = None,
) -> T:
    """Run `call`, retrying transient failures until `budget_s` seconds have passed.

    `call` gets the deadline so it can bound each of its requests with `deadline.timeout()`;
    `on_retry` hears of each retry (for the API-retry metric). The first try runs directly:
    setting up tenacity's retry loop cost ~50 us, on every claim read of every prepare, for calls
    that nearly always succeed at once.
    """
    deadline = Deadline(budget_s)
    try:
        return call(deadline)
    except Exception as error:
        first_failure = error
    try:
        return _retry_loop(deadline, on_retry)(_replaying(first_failure, call), deadline)
    except Exception as error:
        _raise_reported(what, budget_s, error)


def _replaying(failure: Exception, call: Callable[[Deadline], T]) -> Callable[[Deadline], T]:
    """`call`, except that its first attempt replays `failure` (the try made before the loop): the
    loop waits, reports and stops on it exactly as it would have had it made that try itself."""
    unreplayed = [failure]

    def attempt(deadline: Deadline) -> T:
        if unreplayed:
            raise unreplayed.pop()
        return call(deadline)

    return attempt


def _retry_loop(deadline: Deadline, on_retry: Callable[[], None] | None) -> tenacity.Retrying:
    """Retries transient failures, with short jittered waits, while the budget lasts."""

    def before_sleep(_: tenacity.RetryCallState) -> None:
        if on_retry is not None:
            on_retry()

    return tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_transient),
        # the budget left after the first try: a hung server's first try may have spent it all
        stop=tenacity.stop_before_delay(deadline.remaining()),
        wait=tenacity.wait_exponential(multiplier=0.1, max=MAX_WAIT_S)
        + tenacity.wait_random(0, 0.1),
        before_sleep=before_sleep,
        reraise=True,
    )


def _raise_reported(what: str, budget_s: float, error: Exception) -> NoReturn:
    """What the caller gets for the last failure: ClusterUnavailable once the budget is spent on
    a transient one, ApiRefused for an answer asking again cannot change, else the error itself."""
    if is_transient(error):
        raise ClusterUnavailable(
            f"{what}: still failing after {budget_s:.0f}s: {describe(error)}"
        ) from error
    if isinstance(error, ApiException):
        raise ApiRefused(f"{what}: {describe(error)} (not retried)") from error
    raise error
