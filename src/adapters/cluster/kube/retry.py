"""Which API failures are worth retrying, and for how long.

Connection errors, 429 and 5xx are transient; 409 conflicts mean someone else wrote first, so the
whole read-plan-write step is retried. Retries are bounded in time, then ClusterUnavailable says
what kept failing. 4xx other than those are answered at once: retrying a 403 only hides RBAC bugs.
"""

from collections.abc import Callable
from typing import TypeVar

import tenacity
import urllib3.exceptions
from kubernetes.client import ApiException

from npu_dra.domain.errors import ClusterUnavailable

T = TypeVar("T")
TRANSIENT_STATUS = frozenset({0, 408, 409, 429, 500, 502, 503, 504})


def is_transient(error: BaseException) -> bool:
    if isinstance(error, ApiException):
        return error.status in TRANSIENT_STATUS
    return isinstance(error, urllib3.exceptions.HTTPError | ConnectionError | TimeoutError)


def describe(error: BaseException) -> str:
    if isinstance(error, ApiException):
        return f"HTTP {error.status} {error.reason}"
    return f"{type(error).__name__}: {error}"


def with_retries(what: str, call: Callable[[], T], *, budget_s: float) -> T:
    """Run `call`, retrying transient failures for up to `budget_s` seconds."""
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_transient),
        stop=tenacity.stop_after_delay(budget_s),
        wait=tenacity.wait_exponential(multiplier=0.1, max=5) + tenacity.wait_random(0, 0.1),
        reraise=True,
    )
    try:
        return retrying(call)
    except BaseException as error:
        if is_transient(error):
            raise ClusterUnavailable(
                f"{what}: still failing after {budget_s:.0f}s: {describe(error)}"
            ) from error
        raise
