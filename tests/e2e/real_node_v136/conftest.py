"""One real node on Kubernetes v1.36.3 for this folder: its own control plane and kubelet
v1.36.3 (ResourceHealthStatus and DRADeviceTaints on by default) + containerd 2.1 + runc, and
the fake Ascend host. Opened after tests/e2e/real_node's node is closed (one node at a time: the
node holds the machine's kubelet paths) and closed as soon as this folder's last test is done."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.real_node.cluster import RealCluster, real_cluster_session
from tests.support.controlplane import ControlPlaneError

HERE = Path(__file__).resolve().parent
_OPEN = pytest.StashKey[contextlib.ExitStack]()


@pytest.fixture(scope="session")
def real_cluster_v136(
    request: pytest.FixtureRequest,
    k8s_bin_dir_v136: Path,
    real_node_bin_dir: Path,
    node_images: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RealCluster]:
    work = tmp_path_factory.mktemp("real-node-v136")
    stack = contextlib.ExitStack()
    try:
        cluster = stack.enter_context(
            real_cluster_session(k8s_bin_dir_v136, real_node_bin_dir, node_images, work)
        )
    except ControlPlaneError as error:  # NodeError too
        stack.close()
        pytest.fail(f"the v1.36.3 real node did not start: {error}", pytrace=False)
    request.config.stash[_OPEN] = stack
    with stack:
        yield cluster


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if nextitem is None or HERE not in Path(nextitem.path).resolve().parents:
        stack = item.config.stash.get(_OPEN, None)
        if stack is not None:
            stack.close()
