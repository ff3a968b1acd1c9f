"""One real node for this folder: its own control plane (so no other test's pod lands on a node
that really runs containers), kubelet v1.34.3 + containerd 2.1 + runc, and a fake Ascend host at
the paths the seed's manifests mount (see tests/support/ascend_host.py).

The folder is not a Python package, so a package-scoped fixture would live as long as the
session; the node is closed instead as soon as this folder's last test is done, so the rest of
the suite does not run beside a kubelet (and the node's lock is free again).
"""

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
    real_node_bin_dir: Path,
    node_images: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RealCluster]:
    work = tmp_path_factory.mktemp("real-node")
    yield from folder_real_cluster(
        request,
        HERE,
        k8s_bin=k8s_bin_dir,
        node_bin=real_node_bin_dir,
        images=node_images,
        work=work,
        what="the real node",
    )


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    close_after_folder(HERE, item, nextitem)
