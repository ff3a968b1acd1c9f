"""The real node the node benchmarks run on: its binaries and images built (cached) and its
cluster session opened, as the real-node tests open theirs."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.e2e.real_node.cluster import RealCluster, real_cluster_session
from tests.support.controlplane import build_binaries
from tests.support.node import NODE_BINARIES, NODE_BUILD_SCRIPT, build_images
from tests.support.node_fixtures import IMAGES_CACHE


@contextlib.contextmanager
def real_node(prefix: str) -> Iterator[tuple[RealCluster, Path] | None]:
    """The cluster and a scratch directory; None (said) where the binaries cannot be built."""
    k8s = build_binaries(lambda line: print(f"  [k8s build] {line}"))
    node_bin = build_binaries(
        lambda line: print(f"  [node build] {line}"),
        script=NODE_BUILD_SCRIPT,
        binaries=NODE_BINARIES,
        what="node",
    )
    if isinstance(k8s, str) or isinstance(node_bin, str):
        print(f"  cannot run: {k8s if isinstance(k8s, str) else node_bin}")
        yield None
        return
    images = build_images(IMAGES_CACHE / "base", node_bin)
    with (
        tempfile.TemporaryDirectory(prefix=prefix) as work,
        real_cluster_session(k8s, node_bin, images, Path(work)) as cluster,
        logs_kept_on_failure(cluster),
    ):
        yield cluster, Path(work)


@contextlib.contextmanager
def logs_kept_on_failure(cluster: RealCluster) -> Iterator[None]:
    """A failure keeps the node's logs (kubelet, containerd) and the plugins' in a directory
    that outlives the scratch one, and says where: what went wrong on a node is in them."""
    try:
        yield
    except BaseException:
        kept = Path(tempfile.mkdtemp(prefix="npu-dra-bench-logs-", dir="/tmp"))
        with contextlib.suppress(OSError):
            shutil.copytree(cluster.node.log_dir, kept, dirs_exist_ok=True)
            for log in cluster.work.glob("*.log"):
                shutil.copy(log, kept)
        print(f"  the node's and the plugins' logs are kept in {kept}")
        raise
