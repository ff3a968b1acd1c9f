"""Claim templates, pods and what the tests read back, for the shared-chip tests on the real
nodes (test_fixed_shares_on_real_node.py here, test_sharing_on_real_node_v137.py on v1.37.2)."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.real_node.cluster import DRIVER, RealCluster
from tests.e2e.seed_yaml import SEED_POD_SPEC

NAMESPACE = "ascend-dra"
CHIP_ZERO = f'device.attributes["{DRIVER}"].?shared.orValue(false)'
SHARE_CLASS = f"share.{DRIVER}"  # deploy/manifests/40-deviceclass.yaml: shares of shared chips


def template(
    name: str,
    *,
    memory: str | None,
    selector: str,
    config: str = "",
    device_class: str = DRIVER,
    count: int = 1,
) -> str:
    """A claim template for `count` devices of `device_class` (whole chips by default): `memory`
    of a shared chip's memCapacity, or the whole."""
    capacity = f"\n          capacity:\n            requests:\n              memCapacity: {memory}"
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {name}
  namespace: {NAMESPACE}
spec:
  spec:
    devices:
      requests:
      - name: npu
        exactly:
          deviceClassName: {device_class}
          count: {count}
          selectors:
          - cel:
              expression: '{selector}'{capacity if memory else ""}{config}
"""


def pod(name: str, claim_template: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {NAMESPACE}
spec:
  terminationGracePeriodSeconds: 1
  resourceClaims:
  - name: npu
    resourceClaimTemplateName: {claim_template}
{SEED_POD_SPEC}"""


def npu_config(strategy: str) -> str:
    return f"""
      config:
      - requests: [npu]
        opaque:
          driver: {DRIVER}
          parameters:
            apiVersion: npu.huawei.com/v1alpha1
            kind: NpuConfig
            sharing:
              strategy: {strategy}"""


def container_env(cluster: RealCluster, name: str) -> dict[str, str]:
    lines = cluster.in_container(name, "env").splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def unschedulable(cluster: RealCluster, name: str) -> str | None:
    """The scheduler's message while it keeps the pod pending, None before it said one."""
    for condition in cluster.read_pod(name)["status"].get("conditions") or []:
        if condition["type"] == "PodScheduled" and condition.get("reason") == "Unschedulable":
            return str(condition.get("message", ""))
    return None


def claim_events(cluster: RealCluster, reason: str) -> list[dict[str, Any]]:
    found = json.loads(cluster.plane.kubectl("get", "events", "-n", NAMESPACE, "-o", "json").stdout)
    return [
        e
        for e in found["items"]
        if e.get("reason") == reason and e["involvedObject"]["kind"] == "ResourceClaim"
    ]


def claimed_device(cluster: RealCluster, name: str) -> str:
    [uid] = cluster.claim_uids(name)
    [device] = cluster.allocated_devices(uid)
    return device


def remove(cluster: RealCluster, pods: tuple[str, ...], templates: tuple[str, ...]) -> None:
    for name in pods:
        cluster.delete_pod(name)
    for name in templates:
        cluster.plane.kubectl(
            "delete", "resourceclaimtemplate", name, "-n", NAMESPACE, "--ignore-not-found",
            check=False,
        )  # fmt: skip
