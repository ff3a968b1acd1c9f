"""One real node for this folder: its own control plane (so no other test's pod lands on a node
that really runs containers), kubelet v1.34.3 + containerd 2.1 + runc, and a fake Ascend host at
the paths the seed's manifests mount (see tests/support/ascend_host.py).

The folder is not a Python package, so a package-scoped fixture would live as long as the
session; the node is closed instead as soon as this folder's last test is done, so the rest of
the suite does not run beside a kubelet (and the node's lock is free again).
"""

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
def real_cluster(
    request: pytest.FixtureRequest,
    k8s_bin_dir: Path,
    real_node_bin_dir: Path,
    node_images: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RealCluster]:
    work = tmp_path_factory.mktemp("real-node")
    stack = contextlib.ExitStack()
    try:
        cluster = stack.enter_context(
            real_cluster_session(k8s_bin_dir, real_node_bin_dir, node_images, work)
        )
    except ControlPlaneError as error:  # NodeError too
        stack.close()
        pytest.fail(f"the real node did not start: {error}", pytrace=False)
    request.config.stash[_OPEN] = stack
    with stack:
        yield cluster


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if nextitem is None or HERE not in Path(nextitem.path).resolve().parents:
        stack = item.config.stash.get(_OPEN, None)
        if stack is not None:
            stack.close()
