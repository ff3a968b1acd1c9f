"""A control plane with the DRA gates that are off in v1.34 and that vNPU devices,
extended-resource pods and shared chips need (DRAPartitionableDevices, DRAExtendedResource,
DRAConsumableCapacity), for test modules to
wrap in a fixture of their own: `yield from gated_control_plane(k8s_bin_dir, tmp_path_factory)`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.controlplane import ControlPlane, ControlPlaneError

GATES = {
    "DRAPartitionableDevices": True,
    "DRAExtendedResource": True,
    "DRAConsumableCapacity": True,
}


def gated_control_plane(
    k8s_bin_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    plane = ControlPlane(k8s_bin_dir, tmp_path_factory.mktemp("gated-plane"), feature_gates=GATES)
    try:
        plane.start()
    except ControlPlaneError as error:
        plane.stop()
        pytest.fail(f"the gated control plane did not start: {error}", pytrace=False)
    try:
        yield plane
    finally:
        plane.stop()
