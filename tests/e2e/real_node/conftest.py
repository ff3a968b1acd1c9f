"""One real node for this folder: its own control plane (so no other test's pod lands on a node
that really runs containers), kubelet v1.34.3 + containerd 2.1 + runc, and a fake Ascend host at
the paths the seed's manifests mount (see tests/support/ascend_host.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.real_node.cluster import RealCluster, real_cluster_session
from tests.support.controlplane import ControlPlaneError


@pytest.fixture(scope="package")
def real_cluster(
    k8s_bin_dir: Path,
    real_node_bin_dir: Path,
    node_images: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RealCluster]:
    work = tmp_path_factory.mktemp("real-node")
    try:
        session = real_cluster_session(k8s_bin_dir, real_node_bin_dir, node_images, work)
        cluster = session.__enter__()
    except ControlPlaneError as error:  # NodeError too
        pytest.fail(f"the real node did not start: {error}", pytrace=False)
    try:
        yield cluster
    finally:
        session.__exit__(None, None, None)
