"""What a fake node description may say, checked as strictly as the Kubernetes objects beside it
in a scenario: a misspelt field (`nuamNodes:`) is an error, not a default silently taken, and a
device count no server has is refused before anything is built for it."""

from collections.abc import Mapping
from typing import Any

# Far above any accelerator server (an A3 node has 16 dies; cut into vNPUs, about a hundred
# devices), and low enough that a mistyped count (100000000) is refused, not built.
MAX_DEVICES_PER_NODE = 1024
ASCEND_FIELDS = frozenset(
    {"chip", "count", "memory", "numaNodes", "topology", "health", "errorCodes"}
    | {"sharedDeviceNodes", "vnpu", "aicores", "deviceIPs", "superPodId"}
)
GPU_FIELDS = frozenset(
    {"gpu", "count", "memory", "numaNodes", "computeCapability", "architecture"}
    | {"driverVersion", "sharedDeviceNodes", "nvidiaSmiXml", "nvmlDump"}
)


def check_description(spec: Mapping[str, Any], fields: frozenset[str]) -> None:
    """ValueError naming the first unknown field or a count out of range."""
    unknown = sorted(str(k) for k in spec if str(k) not in fields)
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r} (known: {', '.join(sorted(fields))})")
    count = spec.get("count")
    if count is None:
        return
    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"count {count!r}: expected a whole number of devices")
    if not 1 <= count <= MAX_DEVICES_PER_NODE:
        raise ValueError(f"count {count}: expected 1 to {MAX_DEVICES_PER_NODE} devices per node")
