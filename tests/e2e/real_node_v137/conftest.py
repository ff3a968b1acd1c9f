"""One real node on Kubernetes v1.37.2 for this folder: its own control plane and kubelet
v1.37.2 (ResourceHealthStatus on by default, DRADeviceTaints GA) + containerd 2.1 + runc, and
the fake Ascend host. Opened after tests/e2e/real_node's node is closed (one node at a time: the
node holds the machine's kubelet paths) and closed as soon as this folder's last test is done."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.real_node.cluster import RealCluster, close_after_folder, folder_real_cluster

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def real_cluster_v137(
    request: pytest.FixtureRequest,
    k8s_bin_dir_v137: Path,
    real_node_bin_dir: Path,
    node_images: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RealCluster]:
    work = tmp_path_factory.mktemp("real-node-v137")
    yield from folder_real_cluster(
        request,
        HERE,
        k8s_bin=k8s_bin_dir_v137,
        node_bin=real_node_bin_dir,
        images=node_images,
        work=work,
        what="the v1.37.2 real node",
    )


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    close_after_folder(HERE, item, nextitem)
