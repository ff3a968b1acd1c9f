"""KEP-5304 metadata beside the CDI specs: the preparer over the file metadata store
(adapters/cdi/metadata_files.py) and in-memory CDI and checkpoint stores on fake hardware."""

import json
import re
import stat
from pathlib import Path

import pytest

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.cdi.metadata_files import FileMetadataFiles
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef
from npu_dra.domain.errors import StateError
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.profile import ASCEND_NPU

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
HARDWARE = {"chip": "910B4", "count": 4, "deviceIPs": {2: "192.168.100.3/24"}, "superPodId": 1}
FILE = "npu/npu.huawei.com-metadata.json"
REQUEST = {"name": "npu", "exactly": {"deviceClassName": DRIVER}}


class Node:
    def __init__(self, plugin_dir: Path) -> None:
        self.cluster = MemoryCluster()
        self.cdi = MemoryCdiStore()
        self.root = plugin_dir / "dra-device-metadata"
        self.preparer = ClaimPreparer(
            cluster=self.cluster, cdi=self.cdi, checkpoints=MemoryCheckpointStore(),
            inventory=InventoryCache(FakeHardware(HARDWARE, node=NODE)), driver=DRIVER,
            profile=ASCEND_NPU, metadata=FileMetadataFiles(plugin_dir),
        )  # fmt: skip

    def claim(self, name: str, *devices: str) -> ClaimRef:
        created = self.cluster.create({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "team"},
            "spec": {"devices": {"requests": [REQUEST]}},
        })  # fmt: skip
        ref = ClaimRef(Namespace("team"), ClaimName(name), ClaimUID(created["metadata"]["uid"]))
        results = tuple(
            AllocationResult(RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(d))
            for d in devices
        )
        self.cluster.set_allocation(ref, Allocation(results, NODE))
        return ref


@pytest.fixture
def node(tmp_path: Path) -> Node:
    return Node(tmp_path)


def test_a_prepared_claims_spec_mounts_its_metadata_file(node: Node) -> None:
    ref = node.claim("job", "npu-1", "npu-2")
    assert node.preparer.prepare([ref])[ref.uid].error is None
    spec = node.cdi.read(uid=ref.uid)
    assert spec is not None
    [mount] = [m for m in spec.edits.mounts if "dra-device-attributes" in m.container_path]
    assert mount.container_path == "/var/run/dra-device-attributes/job"
    assert mount.host_path == str(node.root / ref.uid)
    written = Path(mount.host_path) / FILE
    document = json.loads(written.read_text())
    devices = document["requests"][0]["devices"]
    assert [d["attributes"]["physicalId"] for d in devices] == [{"int": 1}, {"int": 2}]
    assert devices[1]["attributes"]["deviceIP"] == {"string": "192.168.100.3"}
    assert devices[1]["attributes"]["superPodId"] == {"int": 1}
    assert "networkData" not in devices[0]
    assert stat.S_IMODE(written.stat().st_mode) == 0o644


def test_unprepare_removes_the_claims_metadata(node: Node) -> None:
    ref = node.claim("job", "npu-0")
    node.preparer.prepare([ref])
    assert (node.root / ref.uid / FILE).exists()
    assert node.preparer.unprepare([ref])[ref.uid] is None
    assert not (node.root / ref.uid).exists()


def test_the_start_up_repair_writes_lost_metadata_again(node: Node) -> None:
    ref = node.claim("job", "npu-0")
    node.preparer.prepare([ref])
    (node.root / ref.uid / FILE).unlink()
    node.preparer.repair()
    assert json.loads((node.root / ref.uid / FILE).read_text())["metadata"]["name"] == "job"


def test_a_path_outside_the_claims_directory_is_refused(tmp_path: Path) -> None:
    store = FileMetadataFiles(tmp_path)
    with pytest.raises(StateError, match=re.escape("metadata file name '../x.json' refused")):
        store.write_metadata(uid=ClaimUID("5a1b"), files={"../x.json": {}})
    assert not (tmp_path / "x.json").exists()
