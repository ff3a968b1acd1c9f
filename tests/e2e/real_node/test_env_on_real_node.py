"""The runtime env CANN reads, on a real node: a pod given chips 3 and 4 (not the first ones, the
case HAMi issue #1894 and vllm-ascend issues #6942/#9428 report) sees exactly /dev/davinci3 and
/dev/davinci4 with the host's numbers, ASCEND_VISIBLE_DEVICES=3,4 (host physical ids, ascending),
and ASCEND_RT_VISIBLE_DEVICES unset by default and, with `--runtime-visible-devices=container`,
the container's own numbering 0,1, never host ids: the rule domain/profile.py writes down with
its sources."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import pytest

from tests.e2e.real_node.cluster import Plugin, RealCluster
from tests.e2e.seed_yaml import SEED_POD_SPEC
from tests.support.ascend_host import LOCAL_MAJOR
from tests.support.controlplane import wait_for

CHIPS = (3, 4)
CLAIM, POD = "npu-3-4-claim", "npu-3-4-pod"
CLAIM_AND_POD = f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: {CLAIM}
  namespace: ascend-dra
spec:
  devices:
    requests:
    - name: npu
      exactly:
        deviceClassName: npu.huawei.com
        allocationMode: ExactCount
        count: 2
        selectors:
        - cel:
            expression: |-
              device.attributes["npu.huawei.com"].physicalId in [4, 3]
---
apiVersion: v1
kind: Pod
metadata:
  name: {POD}
  namespace: ascend-dra
spec:
  resourceClaims:
  - name: npu
    resourceClaimName: {CLAIM}
{SEED_POD_SPEC}"""
DEVICE_LINE = re.compile(r"^c\S+\s+\d+\s+\d+\s+\d+\s+(\d+),\s*(\d+)\s+.*\s(davinci\d+)$")


def davinci_nodes(listing: str) -> dict[str, tuple[int, int]]:
    """`ls -ln /dev` in a container -> davinci<N> -> (major, minor)."""
    found = {}
    for line in listing.splitlines():
        if match := DEVICE_LINE.match(line.strip()):
            found[match.group(3)] = (int(match.group(1)), int(match.group(2)))
    return found


@contextlib.contextmanager
def running_plugin(cluster: RealCluster, argv: list[str]) -> Iterator[Plugin]:
    plugin = cluster.start_plugin("dra-plugin", argv)
    try:
        yield plugin
    finally:
        plugin.stop()


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("mode", "runtime_ids"), [("unset", None), ("container", "0,1")])
def test_a_pod_given_chips_3_and_4_sees_their_nodes_and_the_env_the_rule_gives(
    real_cluster: RealCluster, mode: str, runtime_ids: str | None
) -> None:
    cluster = real_cluster
    argv = [*cluster.dra_argv(), f"--runtime-visible-devices={mode}"]
    with running_plugin(cluster, argv) as plugin:
        cluster.wait_registered(plugin)
        wait_for(lambda: len(cluster.published()) == 8, timeout=60, what="8 NPUs published")
        cluster.apply(CLAIM_AND_POD)
        cluster.wait_running(POD)
        [uid] = cluster.claim_uids(POD)
        assert cluster.allocated_devices(uid) == ["npu-3", "npu-4"]

        nodes = davinci_nodes(cluster.in_container(POD, "ls", "-ln", "/dev"))
        assert nodes == {f"davinci{n}": (LOCAL_MAJOR, n) for n in CHIPS}, nodes
        env = dict(
            line.split("=", 1)
            for line in cluster.in_container(POD, "env").splitlines()
            if "=" in line
        )
        assert env.get("ASCEND_VISIBLE_DEVICES") == "3,4", env
        # The container numbers its chips 0..N-1 in the order of their nodes: davinci3 is its 0.
        assert env.get("ASCEND_RT_VISIBLE_DEVICES") == runtime_ids, env

        cluster.delete_pod(POD)
        wait_for(
            lambda: uid not in cluster.checkpointed_uids() and uid not in cluster.cdi_spec_uids(),
            timeout=60,
            what="the kubelet to unprepare the claim",
        )
        assert plugin.running(), plugin.tail()
    cluster.plane.kubectl("delete", "resourceclaim", CLAIM, "-n", "ascend-dra")
