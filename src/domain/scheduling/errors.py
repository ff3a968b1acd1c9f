"""The allocator's errors, apart from the search so that each of its parts (the requests'
set-up, the checks on a candidate device, the search itself) can raise them; allocator.py is
where callers import them from.
"""

from npu_dra.domain.errors import DomainError


class AllocationError(DomainError):
    """What the scheduler's Filter returns as an error: the pod stays unschedulable with it."""


class SearchBudgetExceeded(DomainError):
    """The search ran past its step budget; the scheduler might still have found a solution."""
