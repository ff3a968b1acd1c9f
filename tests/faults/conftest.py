"""The fault suite runs against the real control plane (so it is marked e2e through the
`control_plane` fixture, and built and run by `make test` like tests/e2e), with deploy/manifests'
ServiceAccount, RBAC and ResourceSlice policy applied once for the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.seed_cluster import access_applied
from tests.support.controlplane import ControlPlane


@pytest.fixture(scope="session")
def access(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    with access_applied(control_plane):
        yield control_plane
