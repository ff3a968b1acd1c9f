"""A node moved from the classic device plugin to DRA: the chips the kubelet still holds for
running pods (its device manager checkpoint, with the pod's directory still there) are left out
of what the DRA plugin publishes, and come back once those pods have gone."""

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from npu_dra.adapters.hardware.classic_held import ClassicHeldProbe
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.kubelet_devices import ClassicAllocations
from npu_dra.domain.ids import NodeName

RUNNING, ENDED, OTHER = (
    "0b7f1a52-3d4e-4f6a-8b9c-0d1e2f3a4b5c",
    "11111111-2222-3333-4444-555555555555",
    "66666666-7777-8888-9999-000000000000",
)


def entry(pod: str, resource: str, *devices: str) -> dict[str, Any]:
    """One PodDevicesEntry as the kubelet writes it (DeviceIDs by NUMA node; AllocResp bytes)."""
    return {
        "PodUID": pod,
        "ContainerName": "app",
        "ResourceName": resource,
        "DeviceIDs": {"-1": list(devices)},
        "AllocResp": "CgQKAggB",
    }


def kubelet(tmp_path: Path, entries: list[dict[str, Any]], running: tuple[str, ...]) -> Path:
    (tmp_path / "device-plugins").mkdir()
    data = {"Data": {"PodDeviceEntries": entries, "RegisteredDevices": {}}, "Checksum": 1}
    (tmp_path / "device-plugins" / "kubelet_internal_checkpoint").write_text(json.dumps(data))
    for pod in running:
        (tmp_path / "pods" / pod).mkdir(parents=True)
    return tmp_path


def test_running_pods_hold_their_chips_ended_and_foreign_ones_do_not(tmp_path: Path) -> None:
    root = kubelet(
        tmp_path,
        [
            entry(RUNNING, "huawei.com/Ascend910", "npu-3", "Ascend910-5"),
            entry(ENDED, "huawei.com/Ascend910", "npu-1"),  # its pod directory is gone
            entry(OTHER, "nvidia.com/gpu", "gpu-2"),
        ],
        running=(RUNNING, OTHER),
    )
    assert ClassicAllocations(root).held() == {3: RUNNING, 5: RUNNING}


def test_the_pool_leaves_held_chips_out_until_their_pod_is_gone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = kubelet(tmp_path, [entry(RUNNING, "huawei.com/Ascend910", "npu-3")], (RUNNING,))
    probe = ClassicHeldProbe(
        FakeHardware({"chip": "910B4", "count": 8}, node=NodeName("n")), ClassicAllocations(root)
    )
    with caplog.at_level(logging.INFO):
        assert [d.physical_id for d in probe.probe().devices] == [0, 1, 2, 4, 5, 6, 7]
        assert f"npu-3 (pod {RUNNING})" in caplog.text
        shutil.rmtree(root / "pods" / RUNNING)  # the kubelet cleaned the pod up
        assert len(probe.probe().devices) == 8
        assert "all published" in caplog.text


@pytest.mark.parametrize(
    "content", [b"{", b'{"Data": 3}', b"[]", b'{"Data": {"PodDeviceEntries": "x"}}', b"\xff"]
)
def test_a_checkpoint_that_cannot_be_read_holds_nothing_and_is_said(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "device-plugins").mkdir()
    (tmp_path / "device-plugins" / "kubelet_internal_checkpoint").write_bytes(content)
    assert ClassicAllocations(tmp_path).held() == {}
    assert "classic allocations unknown, taken as none" in caplog.text


def test_no_kubelet_checkpoint_holds_nothing(tmp_path: Path) -> None:
    assert ClassicAllocations(tmp_path).held() == {}


def test_a_pod_uid_that_would_leave_the_pods_directory_counts_for_nothing(tmp_path: Path) -> None:
    root = kubelet(tmp_path, [entry("../device-plugins", "huawei.com/Ascend910", "npu-1")], ())
    assert ClassicAllocations(root).held() == {}
