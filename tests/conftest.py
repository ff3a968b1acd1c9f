"""Fixtures shared by every test folder: the real Kubernetes control plane and the real node."""

pytest_plugins = ["tests.support.k8s_fixtures", "tests.support.node_fixtures"]
