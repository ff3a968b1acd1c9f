"""One real node on containerd 1.7 for this folder (the seed says containerd >= 1.7.0 is
supported): kubelet v1.34.3 + containerd v1.7.35 (config version 2, CDI enabled explicitly, as
1.7 needs; see tests/support/containerd_config.py) + runc, and the fake Ascend host. Opened after
the other real nodes are closed (one node at a time: it holds the machine's kubelet paths) and
closed as soon as this folder's last test is done."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.real_node.cluster import RealCluster, close_after_folder, folder_real_cluster

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def real_cluster(
    request: pytest.FixtureRequest,
    k8s_bin_dir: Path,
    real_node_bin_dir_containerd17: Path,
    node_images: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RealCluster]:
    work = tmp_path_factory.mktemp("real-node-containerd17")
    yield from folder_real_cluster(
        request,
        HERE,
        k8s_bin=k8s_bin_dir,
        node_bin=real_node_bin_dir_containerd17,
        images=node_images,
        work=work,
        what="the containerd 1.7 real node",
    )


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    close_after_folder(HERE, item, nextitem)
