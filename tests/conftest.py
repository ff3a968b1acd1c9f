"""Fixtures shared by every test folder: the real Kubernetes control plane and the real node,
and the suite's tiers (markers, and the units of work pytest-xdist hands out)."""

pytest_plugins = [
    "tests.support.k8s_fixtures",
    "tests.support.node_fixtures",
    "tests.support.tiers",
]
