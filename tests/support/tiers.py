"""The suite's tiers and how its e2e tests share workers (loaded by ``pytest_plugins`` in
tests/conftest.py).

Markers, from what a test uses (so a new test lands in the right tier without being told):
``e2e`` (a control plane or the real node; set by k8s_fixtures, node_fixtures and tests/e2e),
``real_node`` (the real node: kubelet + containerd + runc on this machine) and ``helm`` (the
helm CLI). `make check` runs ``not e2e``; `make e2e` ``e2e and not real_node``; `make
real-node` ``real_node``; `make test` all of them.

Under pytest-xdist with ``--dist loadscope`` each test module is one unit of work, so a
module's own fixtures start once (every worker starts its own session planes), and the real
node is one unit for all its folders: it is one per machine (it holds the kubelet's paths and a
lock). That unit is handed out first, since it is the longest; the modules that need another
version's binaries than v1.34.3 last (v1.37.2's, then any v1.36.3 one's: the order prebuild.py
builds them), so that on a cold machine their build overlaps the rest. (xdist's own
``loadgroup`` marks cannot do this under pytest 9.2, whose node ids no longer take the group
suffix xdist writes into ``_nodeid``; the scheduler below reads paths instead, and
collection keeps the paths and the fixtures in step.)
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.k8s_fixtures import V136, V137, versions_needed

REAL_NODE_FIXTURES = ("real_node_bin_dir", "real_node_bin_dir_containerd17")
# Where the tests that need the real node live (nodeid prefixes): one unit of work.
REAL_NODE_PATHS = ("tests/e2e/real_node", "tests/e2e/test_real_node_teardown.py")
REAL_NODE_UNIT = "real-node"


def needs_real_node(item: pytest.Item) -> bool:
    names = getattr(item, "fixturenames", ())
    return any(name in names for name in REAL_NODE_FIXTURES)


def needs_helm(item: pytest.Item) -> bool:
    return "helm" in getattr(item, "fixturenames", ())


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: the real node, or its module."""
    if nodeid.startswith(REAL_NODE_PATHS):
        return REAL_NODE_UNIT
    return nodeid.split("::", 1)[0]


def _order(item: pytest.Item) -> tuple[bool, bool, bool]:
    versions = versions_needed(item)
    return not needs_real_node(item), V137 in versions, V136 in versions


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if needs_real_node(item) and not item.nodeid.startswith(REAL_NODE_PATHS):
            raise pytest.UsageError(
                f"{item.nodeid} needs the real node: put it under {' or '.join(REAL_NODE_PATHS)}"
                " (tests/support/tiers.py), so that it runs in the real node's unit of work"
            )
        if needs_real_node(item):
            item.add_marker(pytest.mark.real_node)
        if needs_helm(item):
            item.add_marker(pytest.mark.helm)
    items.sort(key=_order)  # stable: within each kind, collection order


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope``: xdist's own scheduler, with our units (`unit_of`)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class TierScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return TierScheduling(config, log)
