"""The KEP-5304 metadata documents and their CDI mount (domain/device_metadata.py)."""

from npu_dra.domain.cdi import CdiSpec, ContainerEdits, Mount
from npu_dra.domain.checkpoint import PreparedClaim, PreparedDevice
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.device_facts import claim_facts
from npu_dra.domain.device_metadata import metadata_files, with_metadata
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

DRIVER = DriverName("npu.huawei.com")
REF = ClaimRef(Namespace("team"), ClaimName("job"), ClaimUID("5a1b"))
CHIPS = NodeInventory(
    NodeName("node-a"),
    tuple(
        Device(
            name=DeviceName(f"npu-{n}"),
            physical_id=n,
            logic_id=n,
            card_id=n,
            chip_id=0,
            chip_name="910B4",
            memory_bytes=1,
            device_ip=f"192.168.1.{n}/24",
            super_pod_id=2,
        )
        for n in range(3)
    ),
)


def prepared(device: str, request: str) -> PreparedDevice:
    return PreparedDevice(
        (RequestName(request),), PoolName("node-a"), DeviceName(device), (f"k=5a1b-{device}",)
    )


def test_each_request_gets_a_file_listing_its_devices_as_device_attributes() -> None:
    claim = PreparedClaim(REF, (prepared("npu-0", "train"), prepared("npu-2", "train"),
                                prepared("npu-1", "eval/small")))  # fmt: skip
    files = metadata_files(claim, claim_facts(claim, CHIPS, DRIVER), DRIVER)
    assert sorted(files) == [
        "eval/npu.huawei.com-metadata.json",
        "train/npu.huawei.com-metadata.json",
    ]
    train = files["train/npu.huawei.com-metadata.json"]
    assert (train["apiVersion"], train["kind"]) == (
        "metadata.resource.k8s.io/v1alpha1",
        "DeviceMetadata",
    )
    assert train["metadata"] == {"name": "job", "namespace": "team", "uid": "5a1b", "generation": 1}
    [request] = train["requests"]
    assert request["name"] == "train"
    assert [d["name"] for d in request["devices"]] == ["npu-0", "npu-2"]
    first = request["devices"][0]
    assert (first["driver"], first["pool"]) == ("npu.huawei.com", "node-a")
    assert first["attributes"]["physicalId"] == {"int": 0}
    assert first["attributes"]["deviceIP"] == {"string": "192.168.1.0"}
    assert first["attributes"]["superPodId"] == {"int": 2}
    assert first["networkData"] == {"ips": ["192.168.1.0/24"]}


def test_the_claims_directory_is_mounted_read_only_where_the_kep_puts_it() -> None:
    spec = CdiSpec("k8s.npu.huawei.com/npu", (), ContainerEdits(mounts=(Mount("/a", "/b"),)))
    claim = PreparedClaim(REF, (prepared("npu-0", "train"),))
    mounted = with_metadata(spec, claim, "/var/lib/kubelet/plugins/npu.huawei.com/m/5a1b")
    assert mounted.edits.mounts[0] == Mount("/a", "/b")
    added = mounted.edits.mounts[1]
    assert (added.host_path, added.container_path) == (
        "/var/lib/kubelet/plugins/npu.huawei.com/m/5a1b",
        "/var/run/dra-device-attributes/job",
    )
    assert "ro" in added.options
