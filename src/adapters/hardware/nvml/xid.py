"""NVIDIA's device plugin's health rule: an XID event makes a GPU unhealthy, except the XIDs
that application faults cause (the GPU itself is fine), which it skips by default."""

from npu_dra.domain.device import Health

# k8s-device-plugin (internal/rm/health.go): 13 graphics engine exception, 31 GPU memory page
# fault, 43 GPU stopped processing, 45 preemptive cleanup, 68 video processor exception,
# 109 context switch timeout: all reported for a misbehaving application.
APPLICATION_XIDS = frozenset({13, 31, 43, 45, 68, 109})


def health_after(xid: int) -> Health:
    return Health.HEALTHY if xid in APPLICATION_XIDS else Health.UNHEALTHY
