"""The one error type hardware probes raise, so callers can tell probe failures from bugs."""

from npu_dra.domain.errors import DomainError


class ProbeError(DomainError):
    """Probing failed; the message names the command or file and the offending line."""
