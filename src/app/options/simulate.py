"""The one-shot commands' options: how discover and simulate print their answer, and what the
simulation runs (its scenario, its search bound, whether it prepares, where its CDI goes).
"""

from npu_dra.app.options.option import Option
from npu_dra.app.options.values import one_of, optional_path, positive_int, switch

# The simulation's allocation search bound per pod and node (domain/scheduling/allocator.py's
# DEFAULT_STEP_BUDGET; a unit test keeps the two equal without importing the scheduler here).
SEARCH_BUDGET = 200_000

OUTPUT = Option(
    "output",
    ("--output", "-o"),
    "yaml, json or table; empty: table for simulate, yaml for discover",
    "",
    one_of(("", "yaml", "json", "table")),
)

SIMULATE = (
    Option(
        "scenario",
        ("--scenario",),
        "Kubernetes-shaped YAML of nodes, classes, claims, pods and DeviceTaintRules "
        "(default: built-in)",
        "",
        optional_path,
        metavar="FILE",
    ),
    Option(
        "snapshot",
        ("--from",),
        "a cluster's state as `kubectl get nodes,resourceslices,deviceclasses,resourceclaims,"
        "resourceclaimtemplates,pods -A -o yaml` prints it (other kinds are skipped); "
        "--scenario adds what-ifs on top",
        "",
        optional_path,
        metavar="FILE",
    ),
    Option(
        "from_cluster",
        ("--from-cluster",),
        "read those objects once from the API server --kubeconfig names (env KUBECONFIG; "
        "empty: the pod's in-cluster service account, else ~/.kube/config) instead of --from: "
        "list requests only, nothing is written",
        "false",
        switch,
        negatable=True,
    ),
    Option(
        "cordon",
        ("--cordon",),
        "with --from or --from-cluster: these nodes get the unschedulable taint, as kubectl "
        "cordon gives it",
        "",
        metavar="NODE,...",
    ),
    Option(
        "remove_node",
        ("--remove-node",),
        "with --from or --from-cluster: these nodes, their slices and the pods bound to them "
        "are gone",
        "",
        metavar="NODE,...",
    ),
    Option(
        "unhealthy",
        ("--unhealthy",),
        "with --from or --from-cluster: these devices are left out of their slices, as a "
        "failed device is",
        "",
        metavar="NODE/DEVICE,...",
    ),
    Option(
        "generate",
        ("--generate",),
        "a generated scenario of identical nodes and NPU pods, for scale runs",
        "",
        metavar="nodes=N,npus=N,pods=N",
    ),
    Option(
        "search_budget",
        ("--search-budget",),
        "allocation search steps per pod and node before a pod is reported Undecided, unless "
        "counting the node's devices rules it out (kube-scheduler bounds the search by time "
        "instead: 10 s per node)",
        str(SEARCH_BUDGET),
        positive_int,
        metavar="STEPS",
    ),
    Option(
        "prepare",
        ("--prepare",),
        "run the node plugins' NodePrepareResources step (--no-prepare: allocate only)",
        "true",
        switch,
        negatable=True,
    ),
    Option(
        "explain",
        ("--explain",),
        "for each pod left pending or Undecided, each node's first reason (grouped): taint, "
        "selector, devices matching/free/untolerated/needed per request, constraint, CEL error, "
        "a search out of steps",
        "false",
        switch,
        "EXPLAIN",
        negatable=True,
    ),
    Option(
        "fail_on_pending",
        ("--fail-on-pending",),
        "exit 3 when a pod is left pending or in error (gated pods do not count), for CI",
        "false",
        switch,
        "FAIL_ON_PENDING",
        negatable=True,
    ),
    Option(
        "cdi_out",
        ("--cdi-out",),
        "write the simulated CDI specs here (default: a temporary directory)",
        "",
        optional_path,
        metavar="DIR",
    ),
    Option(
        "kubernetes_version",
        ("--kubernetes-version",),
        "decide as this kube-scheduler: 1.34 (v1.34.3), 1.36 (v1.36.3) or 1.37 (v1.37.2, the "
        "current release: the default)",
        "1.37",
        metavar="VERSION",
        env="KUBERNETES_VERSION",
    ),
    Option(
        "feature_gates",
        ("--feature-gates",),
        "DRA feature gates set away from that version's defaults, as kube-scheduler and the API "
        "server take them (the output says which gates and allocator variant it assumed)",
        "",
        env="FEATURE_GATES",
        metavar="Name=true|false,...",
    ),
)
