"""The suite's tiers and how its e2e tests share workers (loaded by ``pytest_plugins`` in
tests/conftest.py).

Markers, from what a test uses (so a new test lands in the right tier without being told):
``e2e`` (a control plane or the real node; set by k8s_fixtures, node_fixtures and tests/e2e),
``real_node`` (the real node: kubelet + containerd + runc on this machine) and ``helm`` (the
helm CLI). `make check` runs ``not e2e``; `make e2e` ``e2e and not real_node``; `make
real-node` ``real_node``; `make test` all of them.

Under pytest-xdist (``--dist loadgroup``), each e2e or helm test module is one unit of work, so a
module's own fixtures (a plugin, a node of the fake cluster) start once; every worker starts its
own session planes. The real node is one per machine (it holds the kubelet's paths and a lock),
so all of its folders are one unit, in their order, and it is handed out first: it is the longest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.k8s_fixtures import needs_control_plane

E2E_DIR = Path(__file__).resolve().parents[1] / "e2e"
REAL_NODE_FIXTURES = ("real_node_bin_dir", "real_node_bin_dir_containerd17")
REAL_NODE_GROUP = "real-node"


def needs_real_node(item: pytest.Item) -> bool:
    names = getattr(item, "fixturenames", ())
    return any(name in names for name in REAL_NODE_FIXTURES)


def needs_helm(item: pytest.Item) -> bool:
    return "helm" in getattr(item, "fixturenames", ())


def is_e2e(item: pytest.Item) -> bool:
    in_e2e_dir = E2E_DIR in Path(item.path).resolve().parents
    return in_e2e_dir or needs_real_node(item) or needs_control_plane(item)


def work_group(item: pytest.Item) -> str | None:
    """The xdist group of a test: the real node, its module, or none (a fast test alone)."""
    if needs_real_node(item):
        return REAL_NODE_GROUP
    if is_e2e(item) or needs_helm(item):
        return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker and xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    grouped = bool(config.getoption("loadgroup", False))
    for item in items:
        if needs_real_node(item):
            item.add_marker(pytest.mark.real_node)
        if needs_helm(item):
            item.add_marker(pytest.mark.helm)
        group = work_group(item)
        if grouped and group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    # The real node's unit first (stable: its folders keep their order, as does the rest).
    items.sort(key=lambda item: not needs_real_node(item))
