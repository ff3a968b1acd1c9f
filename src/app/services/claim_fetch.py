"""Reading a call's claims from the API concurrently, under one deadline.

The kubelet gives NodePrepareResources 45 s for all its claims together. Reading them one by one
multiplies an API server's latency (or its retry budget during an outage) by the number of
claims, so they are read by a few worker threads at once and the call waits at most `deadline_s`:
a claim whose read has not finished by then gets an error of its own, and the kubelet retries it.
The workers are daemon threads of this call only, so a read stuck in the API never holds up a
later call or the process's exit; once the deadline passed, no worker starts another read.
"""

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from npu_dra.domain.claims import ClaimRef, ResourceClaim
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimUID

log = logging.getLogger(__name__)

Fetched = ResourceClaim | str  # the claim, or why it could not be read


def fetch_claims(
    refs: Sequence[ClaimRef],
    get: Callable[[ClaimRef], ResourceClaim],
    *,
    deadline_s: float,
    workers: int,
) -> dict[ClaimUID, Fetched]:
    """Each claim of `refs`, or an error naming it; returns within about `deadline_s`."""
    unique = list({ref.uid: ref for ref in refs}.values())
    if not unique:
        return {}
    end = time.monotonic() + deadline_s
    todo = deque(unique)
    results: dict[ClaimUID, Fetched] = {}
    finished = threading.Condition()

    def work() -> None:
        while time.monotonic() < end:
            with finished:
                if not todo:
                    return
                ref = todo.popleft()
            outcome = _read(ref, get)
            with finished:
                results[ref.uid] = outcome
                finished.notify_all()

    for index in range(min(workers, len(unique))):
        threading.Thread(target=work, name=f"claim-get-{index}", daemon=True).start()
    with finished:
        finished.wait_for(
            lambda: len(results) >= len(unique), timeout=max(end - time.monotonic(), 0)
        )
        answered = dict(results)
    return {ref.uid: answered.get(ref.uid) or _late(ref, deadline_s) for ref in refs}


def _late(ref: ClaimRef, deadline_s: float) -> str:
    return (
        f"claim {ref}: the API server did not answer within {deadline_s:g}s; not prepared "
        "(the kubelet retries)"
    )


def _read(ref: ClaimRef, get: Callable[[ClaimRef], ResourceClaim]) -> Fetched:
    try:
        return get(ref)
    except DomainError as error:
        return f"claim {ref}: {error}"
    except Exception as error:  # a bug in one claim's read must not cost the call its deadline
        log.exception("reading claim %s failed", ref)
        return f"claim {ref}: cannot read it: {type(error).__name__}: {error}"
