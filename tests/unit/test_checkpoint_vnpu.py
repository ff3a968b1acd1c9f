"""A prepared vNPU device's vNPU record survives the checkpoint file, and older files (without the
field) still load."""

from npu_dra.adapters.checkpoint.codec import checksum, decode, encode
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimName, ClaimUID, DeviceName, Namespace, PoolName, RequestName
from npu_dra.domain.vnpu.instance import VnpuRecord

UID = ClaimUID("8d0b8a6e-0000-4000-8000-000000000001")


def prepared(vnpu: VnpuRecord | None) -> Checkpoint:
    device = PreparedDevice(
        (RequestName("npu"),), PoolName("n"), DeviceName("npu-0-vir05-1c-16g-0"), ("k=x",),
        vnpu=vnpu,
    )  # fmt: skip
    ref = ClaimRef(Namespace("default"), ClaimName("a"), UID)
    return Checkpoint({UID: PreparedClaim(ref, (device,))})


def test_the_vnpu_record_round_trips() -> None:
    checkpoint = prepared(VnpuRecord(100, DeviceName("npu-0"), "vir05_1c_16g"))
    assert decode(encode(checkpoint)) == checkpoint
    assert checkpoint.vnpus() == {100: (UID, VnpuRecord(100, DeviceName("npu-0"), "vir05_1c_16g"))}


def test_a_document_without_the_field_loads_as_whole_chips() -> None:
    document = encode(prepared(None))
    for device in document["claims"][UID]["devices"]:
        device.pop("vnpu")
    document["checksum"] = checksum(document["claims"])
    assert decode(document) == prepared(None)
