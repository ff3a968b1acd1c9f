"""Fixtures shared by every test folder: the real Kubernetes control plane."""

pytest_plugins = ["tests.support.k8s_fixtures"]
