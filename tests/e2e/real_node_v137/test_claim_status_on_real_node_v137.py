"""Claim status and device metadata on the real v1.37.2 node, where claim device status is GA:
the rank-table round of real_node/test_claim_status_on_real_node.py (the example pod prints its
HCCL rank-table fields from its metadata file, the claim's status.devices says the same, both
go with the pod) under the manifests' RBAC as 1.37 authorizes it."""

from __future__ import annotations

import pytest

from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.test_claim_status_on_real_node import rank_table_round


@pytest.mark.timeout(600)
def test_the_rank_table_round_on_v1_37(real_cluster_v137: RealCluster) -> None:
    rank_table_round(real_cluster_v137)
