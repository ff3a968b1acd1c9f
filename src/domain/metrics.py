"""What the node plugin counts, as a port, and the few words a claim's error is counted under.

Services call `metrics.call_done(...)`-style methods and know nothing of Prometheus; the adapter
(adapters/metrics/prometheus.py) turns them into series, and tests use the in-memory recorder.
Error messages name claims and devices, so they are never labels: `error_reason` reduces one to
a word from a small fixed set an operator can alert on.
"""

from collections.abc import Sequence
from typing import Protocol

# (reason, words the message holds), first match wins; "other" if none does.
_REASONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("not_allocated", ("is not allocated",)),
    ("claim_not_found", ("not found", "replaced, now uid", "is prepared for")),
    ("device_unhealthy", ("device is ",)),
    ("device_not_on_node", ("no such device", "no longer on this node")),
    ("device_in_use", ("already prepared for claim",)),
    ("api_unavailable", ("did not answer", "cannot read it", "unavailable", "timed out")),
    ("bad_config", ("config",)),
)
REASONS = (*(reason for reason, _ in _REASONS), "internal", "other")


def error_reason(message: str) -> str:
    lowered = message.lower()
    for reason, words in _REASONS:
        if any(word in lowered for word in words):
            return reason
    return "other"


class PluginMetrics(Protocol):
    """Counted by the node plugin's services; every method is cheap and never raises."""

    def call_started(self, *, method: str) -> None:
        """A kubelet call (NodePrepareResources, ...) began; paired with call_done."""
        ...

    def call_done(self, *, method: str, seconds: float, error_reasons: Sequence[str]) -> None:
        """It ended after `seconds`; one reason per claim that failed (`internal`: the call
        itself raised)."""
        ...

    def publish_done(self, *, ok: bool) -> None:
        """One ResourceSlice publish of the pool, succeeded or failed."""
        ...

    def probe_done(self, *, backend: str, seconds: float, ok: bool) -> None:
        """One hardware probe through `backend` (`dcmi`, `npu_smi`, `nvml`, `fake`) ended."""
        ...

    def allocate_done(self, *, resource: str, seconds: float, error_reason: str | None) -> None:
        """The device plugin answered one Allocate for `resource` (`error_reason` if refused)."""
        ...

    def devices_listed(self, *, resource: str) -> None:
        """The device plugin sent `resource`'s device list on a ListAndWatch stream."""
        ...

    def hardware_command_done(self, *, command: str, seconds: float, ok: bool) -> None:
        """One hardware command (`npu-smi info -t topo`, ids left out) ended."""
        ...

    def api_retry(self, *, operation: str) -> None:
        """An API call (`publish_slices`, `read`, ...) failed transiently and is retried."""
        ...
