"""A claim request's tolerations of device taints (KEP-5055), and the rule that says whether one
tolerates a taint (k8s.io/dynamic-resource-allocation v0.34.3, resourceclaim/devicetoleration.go
`ToleratesTaint`, which copies core/v1's Toleration.ToleratesTaint).

With DRADeviceTaints on, the scheduler's allocator takes a tainted device only for a request
that tolerates every one of its taints (scheduling/candidates.py). v0.36.3 also skips taints of
an effect other than NoSchedule and NoExecute (1.36's `None`, or an unknown one) there; the
taints read here never have another effect (adapters/kube_shapes/slices.py refuses them).
"""

import enum
from collections.abc import Iterable

import attrs

from npu_dra.domain.device_taints import DeviceTaint

NONE_EFFECT = "None"  # v1.36's effect of a taint that only informs; it never blocks allocation


class TolerationOperator(enum.Enum):
    EQUAL = "Equal"  # the API server's default
    EXISTS = "Exists"


@attrs.frozen
class DeviceToleration:
    """`key` empty: every key (then the operator is Exists); `effect` empty: every effect.
    `toleration_seconds` bounds how long a NoExecute taint is tolerated once the device is in
    use (eviction); it plays no part in allocating."""

    key: str = ""
    operator: TolerationOperator = TolerationOperator.EQUAL
    value: str = ""
    effect: str = ""  # NoSchedule, NoExecute, None (v1.36) or empty
    toleration_seconds: int | None = None


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """ToleratesTaint: the effect and the key match (or are empty), then Exists matches any
    value and Equal the same value."""
    if toleration.effect and toleration.effect != taint.effect.value:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    return toleration.operator is TolerationOperator.EXISTS or toleration.value == taint.value


def all_tolerated(taints: Iterable[DeviceTaint], tolerations: Iterable[DeviceToleration]) -> bool:
    """allTaintsTolerated (structured/internal/experimental/allocator_experimental.go v0.34.3):
    every taint tolerated by at least one toleration; a device without taints always is."""
    held = tuple(tolerations)
    return all(any(tolerates(t, taint) for t in held) for taint in taints)
