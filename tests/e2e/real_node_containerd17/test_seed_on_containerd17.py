"""The seed's acceptance step on containerd 1.7: the same test as on containerd 2.1
(tests/e2e/real_node/test_seed_on_real_node.py), run here against this folder's node. Its pods
start with exactly their NPUs, `npu-smi info` runs inside, and deleting a pod unprepares its
claim; the runtime version is checked first, so the test cannot pass on the wrong node."""

from __future__ import annotations

import pytest

from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.test_seed_on_real_node import (
    test_seed_pods_start_with_exactly_their_npus_and_unprepare_on_delete as seed_flow,
)


def test_the_node_runs_containerd_17(real_cluster: RealCluster) -> None:
    node = real_cluster.plane.kubectl(
        "get", "node", real_cluster.node.name, "-o",
        "jsonpath={.status.nodeInfo.containerRuntimeVersion}",
    ).stdout  # fmt: skip
    assert node.startswith("containerd://1.7."), node


@pytest.mark.timeout(600)
def test_seed_flow_on_containerd_17(real_cluster: RealCluster) -> None:
    seed_flow(real_cluster)
