"""A GPU node through the kubelet plugin's own object graph (NodeContainer, --device-profile=gpu,
the recorded H100 as fake hardware): it publishes gpu-0 under our driver name and a prepared
claim's CDI spec injects /dev/nvidia0, nvidiactl and the uvm nodes, and the GPU's uuid."""

import json
from pathlib import Path

from dependency_injector import providers

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.app.container import NodeContainer
from npu_dra.app.options import Hardware, defaults
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef
from npu_dra.domain.ids import ClaimName, DeviceName, DriverName, Namespace, PoolName, RequestName

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nvml"
DRIVER = DriverName("gpu.npu-dra.io")
H100_UUID = "GPU-c4a99447-5dcb-8716-f7a2-6c7507bc0582"


def test_a_claim_for_the_recorded_h100_is_prepared_with_nvidia_cdi_content(
    tmp_path: Path,
) -> None:
    node = tmp_path / "gpu-node.yaml"
    node.write_text(
        f"nvidiaSmiXml: {FIXTURES / 'nvidia-smi-q-x_H100.xml'}\n"
        f"nvmlDump: {FIXTURES / 'nvml-dump_H100.json'}\n"
    )
    cluster = MemoryCluster()
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-node"}})
    settings = defaults(
        node_name="gpu-node",
        driver_name=str(DRIVER),
        device_profile="gpu",
        hardware=Hardware("fake", node),
        cdi_root=tmp_path / "cdi",
        plugins_dir=tmp_path / "plugins",
    )
    container = NodeContainer(settings=providers.Object(settings), cluster=cluster)
    (tmp_path / "plugins" / DRIVER).mkdir(parents=True)
    container.publisher().publish()
    [published] = cluster.list_slices(driver=DRIVER)
    assert [d.name for d in published.devices] == ["gpu-0"]

    created = cluster.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}
            },
        }
    )
    ref = ClaimRef(Namespace("default"), ClaimName("one-gpu"), created["metadata"]["uid"])
    result = AllocationResult(RequestName("gpu"), DRIVER, PoolName("gpu-node"), DeviceName("gpu-0"))
    cluster.set_allocation(ref, Allocation((result,), "gpu-node"))
    outcome = container.preparer().prepare([ref])

    assert outcome[ref.uid].error is None
    [spec_file] = (tmp_path / "cdi").iterdir()
    spec = json.loads(spec_file.read_text())
    assert spec["kind"] == "k8s.gpu.npu-dra.io/gpu"
    [device] = spec["devices"]
    assert [n["path"] for n in device["containerEdits"]["deviceNodes"]] == ["/dev/nvidia0"]
    shared = spec["containerEdits"]
    assert [n["path"] for n in shared["deviceNodes"]] == [
        "/dev/nvidiactl",
        "/dev/nvidia-uvm",
        "/dev/nvidia-uvm-tools",
    ]
    assert f"NVIDIA_VISIBLE_DEVICES={H100_UUID}" in shared["env"]
    container.preparer().unprepare([ref])
    assert list((tmp_path / "cdi").iterdir()) == []
