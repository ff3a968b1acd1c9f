"""The cluster-facing options: which API server the kubelet plugin talks to, how long a prepare
waits for it, and what it publishes there (vNPUs, device taints, shared chips).
"""

from npu_dra.app.options.option import Option
from npu_dra.app.options.values import (
    CLUSTERS,
    DEVICE_TAINTS,
    VNPU_MODES,
    chip_shares,
    claim_fetch_timeout,
    one_of,
    shared_chips,
    switch,
    taint_effects,
)

CLUSTER = (
    Option(
        "kubeconfig",
        ("--kubeconfig",),
        "kubeconfig file; empty: the pod's in-cluster service account",
        "",
        env="KUBECONFIG",
        metavar="FILE",
    ),
    Option(
        "cluster",
        ("--cluster",),
        "cluster API; memory is an empty in-memory API for tests and demos only",
        "kubernetes",
        one_of(CLUSTERS),
    ),
    Option(
        "claim_fetch_timeout",
        ("--claim-fetch-timeout",),
        "seconds a prepare waits for the API server to return its claims, all together",
        "20",
        claim_fetch_timeout,
        "CLAIM_FETCH_TIMEOUT",
        "SECONDS",
    ),
    Option(
        "claim_prefetch",
        ("--claim-prefetch",),
        "read each claim when its pod is bound to this node, so a prepare finds it ready "
        '(needs list and watch on pods cluster-wide: docs/operating.md "Claim prefetch")',
        "false",
        switch,
        "CLAIM_PREFETCH",
        negatable=True,
    ),
    Option(
        "vnpu",
        ("--vnpu", "--partitions"),
        "none: whole chips only; templates: also publish each chip's vNPU template "
        "placements as partitionable devices (needs DRAPartitionableDevices); --partitions and "
        "env PARTITIONS are its older names",
        "none",
        one_of(VNPU_MODES),
        "VNPU",
        env_aliases=("PARTITIONS",),
    ),
    Option(
        "device_taints",
        ("--device-taints",),
        "auto: unhealthy devices stay published with a device taint where the API server "
        "serves taints (DRADeviceTaints), else are left out; off: always left out",
        "auto",
        one_of(DEVICE_TAINTS),
        "DEVICE_TAINTS",
    ),
    Option(
        "taint_effects",
        ("--taint-effects",),
        "health word -> taint effect over the defaults Degraded=None,Unhealthy=NoSchedule,"
        "Critical=NoExecute,Unknown=NoSchedule (e.g. Critical=NoSchedule)",
        "",
        taint_effects,
        "TAINT_EFFECTS",
        "WORD=EFFECT,...",
    ),
)

# docs/vnpus-and-sharing.md (domain/chip_sharing/policy.py): the same flags on the kubelet plugin
# and simulate.
SHARING = (
    Option(
        "shared_chips",
        ("--shared-chips",),
        "chips several claims may share: all, or device names (npu-0,npu-3); published with "
        "consumable capacity where the API server serves it (DRAConsumableCapacity), else as "
        "--chip-shares fixed share devices each; a shared chip offers no vNPUs; empty: none",
        "",
        shared_chips,
        "SHARED_CHIPS",
        "all|NAME,...",
    ),
    Option(
        "chip_shares",
        ("--chip-shares",),
        "fixed share devices per shared chip (2-100) where consumable capacity is not served",
        "4",
        chip_shares,
        "CHIP_SHARES",
        "N",
    ),
)
