"""Fixtures for tests on a real node (loaded by ``pytest_plugins`` in tests/conftest.py).

A test that uses `real_node_bin_dir` (directly or through a fixture built on it) is marked
``e2e``; when any is selected, containerd and the node's system tools are built or installed by
``tests/e2e/node/build.sh`` once collection is done, before any test's timeout starts, as the
control plane's binaries are. A missing tool fails those tests with what to install; it never
skips them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.controlplane import build_binaries
from tests.support.k8s_fixtures import untimed
from tests.support.node import NODE_BINARIES, NODE_BUILD_SCRIPT, build_images

_BUILD_RESULT = pytest.StashKey[Path | str]()
IMAGES_CACHE = Path(
    os.environ.get(
        "NPU_DRA_IMAGES_CACHE",
        Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "npu-dra" / "images",
    )
)


def needs_real_node(item: pytest.Item) -> bool:
    return "real_node_bin_dir" in getattr(item, "fixturenames", ())


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if needs_real_node(item):
            item.add_marker(pytest.mark.e2e)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if any(needs_real_node(item) for item in session.items):
        build_node_before_tests(session.config)


def build_node_before_tests(config: pytest.Config) -> None:
    if _BUILD_RESULT in config.stash:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if reporter is not None:
            reporter.write_line(f"[node build] {line}")

    config.stash[_BUILD_RESULT] = build_binaries(
        say, script=NODE_BUILD_SCRIPT, binaries=NODE_BINARIES, what="node"
    )


@pytest.fixture(scope="session")
def real_node_bin_dir(request: pytest.FixtureRequest) -> Path:
    """containerd, containerd-shim-runc-v2, ctr and pause (built by tests/e2e/node/build.sh)."""
    build_node_before_tests(request.config)
    result = request.config.stash[_BUILD_RESULT]
    if isinstance(result, str):
        pytest.fail(result, pytrace=False)
    return result


@pytest.fixture(scope="session")
def node_images(real_node_bin_dir: Path) -> Path:
    """The sandbox and business images as docker archives (rebuilt each session: seconds)."""
    return build_images(IMAGES_CACHE / "base", real_node_bin_dir)


CONTAINERD_17 = "v1.7.35"  # the newest containerd 1.7 the Go module proxy serves


@pytest.fixture(scope="session")
def real_node_bin_dir_containerd17(request: pytest.FixtureRequest) -> Path:
    """containerd 1.7 (the seed's stated minimum line), its shim, ctr and pause, built by
    tests/e2e/node/build.sh v1.7.35 from tests/e2e/node/containerd-1.7/go.mod."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if reporter is not None:
            reporter.write_line(f"[node build {CONTAINERD_17}] {line}")

    with untimed():  # built (or waited for) when first asked, outside the test's timeout
        result = build_binaries(
            say, script=NODE_BUILD_SCRIPT, binaries=NODE_BINARIES, what="node", args=[CONTAINERD_17]
        )
    if isinstance(result, str):
        pytest.fail(result, pytrace=False)
    return result
