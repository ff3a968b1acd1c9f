"""The plugin process as the chart runs it by default, for the fault tests that drive one: per-pod
sockets (the harness's own default, PER_POD), and here the DaemonSet it watches (with
deploy/manifests' Role to watch it, and a DaemonSet object selecting no node: the stand-in pod
plays its pod) and the claim prefetch on (the rule the chart adds for it is
`seed_cluster.prefetch_granted`). The liveness port stays off (-1, the harness's argv): a fixed
host port would collide between tests.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import yaml

from tests.e2e.seed_cluster import ACCOUNT, MANIFESTS, NAMESPACE
from tests.faults.harness import FETCH_TIMEOUT_S
from tests.support.controlplane import ControlPlane
from tests.support.version import IMAGE

DAEMONSET = ACCOUNT  # the name deploy/manifests give it, and its Role grants watching
STOP_S = 30.0  # how long the test waits for a step before it fails


def chart_defaults() -> dict[str, str]:
    return {
        "DAEMONSET_NAME": DAEMONSET,
        "POD_NAMESPACE": NAMESPACE,
        "CLAIM_PREFETCH": "true",
        "CLAIM_FETCH_TIMEOUT": str(FETCH_TIMEOUT_S),
    }


@contextlib.contextmanager
def daemonset_watch_granted(plane: ControlPlane) -> Iterator[None]:
    """deploy/manifests' Role and RoleBinding: the plugin may watch its own DaemonSet."""
    documents = yaml.safe_load_all((MANIFESTS / "20-rbac.yaml").read_text())
    roles = [doc for doc in documents if doc and doc["kind"] in ("Role", "RoleBinding")]
    plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(roles))
    try:
        yield
    finally:
        plane.kubectl("delete", "-n", NAMESPACE, "rolebinding,role", ACCOUNT, "--ignore-not-found",
                      check=False)  # fmt: skip


def apply_daemonset(plane: ControlPlane) -> None:
    """The plugin's DaemonSet, selecting no node (the stand-in pod plays its pod)."""
    labels = {"app": DAEMONSET}
    body = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": DAEMONSET, "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": {"npu-dra.test/nowhere": "true"},
                    "containers": [{"name": "kubeletplugin", "image": IMAGE}],
                },
            },
        },
    }
    plane.kubectl("apply", "-f", "-", input=json.dumps(body))
