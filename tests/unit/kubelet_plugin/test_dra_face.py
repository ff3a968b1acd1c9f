"""The DRAPlugin faces (v1, v1beta1) over a real ClaimPreparer on in-memory adapters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.files import FileCheckpointStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.grpc.dra_servicer import DraCalls, DraPluginV1, DraPluginV1beta1
from npu_dra.adapters.grpc.gen.dra.v1 import api_pb2 as v1
from npu_dra.adapters.grpc.gen.dra.v1beta1 import api_pb2 as v1beta1
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from npu_dra.domain.claims import ClaimRef
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
from npu_dra.domain.ports import CheckpointStore
from npu_dra.domain.profile import ASCEND_NPU

DRIVER = DriverName("npu.huawei.com")
SHARE = "0b7f1a52-3d4e-4f6a-8b9c-0d1e2f3a4b5c"
RECORDED = ClaimRef(Namespace("team-a"), ClaimName("recorded"), ClaimUID("uid-recorded"))


class Call:
    """grpc's servicer context, as far as the faces use it."""

    def __init__(self, remaining: float | None = 30.0) -> None:
        self.remaining = remaining

    def is_active(self) -> bool:
        return self.remaining is None or self.remaining > 0

    def time_remaining(self) -> float | None:
        return self.remaining

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise Aborted(code, details)


class Aborted(Exception):
    pass


LIVE = Call()


class GoneAfterStart(Call):
    """A call live at the start check whose caller goes away right after (the kubelet cancels:
    its pod is being deleted), before the preparer registers the claims."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def is_active(self) -> bool:
        self.asked += 1
        return self.asked == 1


class Plugin:
    def __init__(self, checkpoints: CheckpointStore | None = None) -> None:
        self.cluster = MemoryCluster()
        self.checkpoints = checkpoints or MemoryCheckpointStore()
        preparer = ClaimPreparer(
            cluster=self.cluster,
            cdi=MemoryCdiStore(),
            checkpoints=self.checkpoints,
            inventory=InventoryCache(
                FakeHardware({"chip": "910B4", "count": 4}, node=NodeName("n1"))
            ),
            driver=DRIVER,
            profile=ASCEND_NPU,
        )
        calls = DraCalls(preparer)
        self.v1 = DraPluginV1(calls)
        self.v1beta1 = DraPluginV1beta1(calls)

    def record(self, *devices: PreparedDevice) -> None:
        """A claim already prepared (as after a restart), so the answer comes from the record."""
        self.checkpoints.save(checkpoint=Checkpoint().with_claim(PreparedClaim(RECORDED, devices)))


def recorded_device(request: str, share_id: str | None = None) -> PreparedDevice:
    return PreparedDevice(
        request_names=(RequestName(request),),
        pool=PoolName("n1"),
        device=DeviceName("npu-1"),
        cdi_ids=("k8s.npu.huawei.com/npu=uid-recorded-npu-1",),
        share_id=share_id,
    )


def claim(module: object, ref: ClaimRef | tuple[str, str, str]) -> object:
    namespace, name, uid = (ref.namespace, ref.name, ref.uid) if isinstance(ref, ClaimRef) else ref
    return module.Claim(namespace=namespace, name=name, uid=uid)  # type: ignore[attr-defined]


def prepare_call(plugin: Plugin, version: str, ref: ClaimRef) -> tuple[Any, Any]:
    """The plugin's face for `version`, and a NodePrepareResources request for `ref`."""
    api = v1 if version == "v1" else v1beta1
    face = plugin.v1 if version == "v1" else plugin.v1beta1
    return face, api.NodePrepareResourcesRequest(claims=[claim(api, ref)])


@pytest.fixture
def plugin() -> Plugin:
    return Plugin()


def test_v1_answers_every_claim_keyed_by_the_uid_sent(plugin: Plugin) -> None:
    plugin.record(recorded_device("npu"))
    bad = ("team-a", "../x", "uid-bad")
    missing = ("team-a", "missing", "uid-missing")
    request = v1.NodePrepareResourcesRequest(
        claims=[claim(v1, RECORDED), claim(v1, bad), claim(v1, missing)]
    )

    response = plugin.v1.NodePrepareResources(request, LIVE)

    assert set(response.claims) == {"uid-recorded", "uid-bad", "uid-missing"}
    assert response.claims["uid-recorded"].error == ""
    assert "invalid claim reference" in response.claims["uid-bad"].error
    assert "not found" in response.claims["uid-missing"].error


def test_subrequest_suffixes_are_stripped_from_request_names(plugin: Plugin) -> None:
    plugin.record(recorded_device("train/big"))
    request = v1beta1.NodePrepareResourcesRequest(claims=[claim(v1beta1, RECORDED)])

    response = plugin.v1beta1.NodePrepareResources(request, LIVE)

    (device,) = response.claims[RECORDED.uid].devices
    assert list(device.request_names) == ["train"]
    assert (device.pool_name, device.device_name) == ("n1", "npu-1")
    assert list(device.cdi_device_ids) == ["k8s.npu.huawei.com/npu=uid-recorded-npu-1"]


def test_v1_carries_the_share_id_and_v1beta1_cannot(plugin: Plugin) -> None:
    plugin.record(recorded_device("npu", share_id=SHARE))

    v1_device = (
        plugin.v1.NodePrepareResources(
            v1.NodePrepareResourcesRequest(claims=[claim(v1, RECORDED)]), LIVE
        )
        .claims[RECORDED.uid]
        .devices[0]
    )
    v1beta1_device = (
        plugin.v1beta1.NodePrepareResources(
            v1beta1.NodePrepareResourcesRequest(claims=[claim(v1beta1, RECORDED)]), LIVE
        )
        .claims[RECORDED.uid]
        .devices[0]
    )

    assert v1_device.share_id == SHARE
    assert "share_id" not in v1beta1.Device.DESCRIPTOR.fields_by_name
    assert v1beta1_device.device_name == v1_device.device_name


def test_an_unreadable_checkpoint_fails_every_claim_in_its_own_slot(tmp_path: Path) -> None:
    damaged = tmp_path / "checkpoint.json"
    damaged.write_text('{"apiVersion": "npu-dra.checkpoint/v9"}')
    plugin = Plugin(FileCheckpointStore(damaged))
    bad = ("TEAM", "x", "uid-bad")
    claims = [claim(v1, RECORDED), claim(v1, bad)]

    prepared = plugin.v1.NodePrepareResources(v1.NodePrepareResourcesRequest(claims=claims), LIVE)
    unprepared = plugin.v1.NodeUnprepareResources(
        v1.NodeUnprepareResourcesRequest(claims=claims), None
    )

    for response in (prepared, unprepared):
        assert str(damaged) in response.claims[RECORDED.uid].error
        assert "invalid claim reference" in response.claims["uid-bad"].error


def test_unprepare_answers_every_claim(plugin: Plugin) -> None:
    plugin.record(recorded_device("npu"))
    request = v1beta1.NodeUnprepareResourcesRequest(
        claims=[claim(v1beta1, RECORDED), claim(v1beta1, ("team-a", "c", "u" * 100))]
    )

    response = plugin.v1beta1.NodeUnprepareResources(request, LIVE)

    assert response.claims[RECORDED.uid].error == ""
    assert "invalid claim reference" in response.claims["u" * 100].error
    assert plugin.checkpoints.load() == Checkpoint()


def test_an_empty_request_gets_an_empty_answer(plugin: Plugin) -> None:
    response = plugin.v1.NodePrepareResources(v1.NodePrepareResourcesRequest(), LIVE)

    assert dict(response.claims) == {}


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_a_prepare_whose_caller_already_gave_up_is_not_started(
    plugin: Plugin, version: str
) -> None:
    ref = ClaimRef(Namespace("team-a"), ClaimName("late"), ClaimUID("uid-late"))
    face, request = prepare_call(plugin, version, ref)

    with pytest.raises(Aborted) as aborted:
        face.NodePrepareResources(request, Call(remaining=0.0))

    assert aborted.value.args[0] == grpc.StatusCode.DEADLINE_EXCEEDED
    assert plugin.checkpoints.load().claims == {}


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_a_prepare_whose_caller_left_before_it_registered_prepares_nothing(
    plugin: Plugin, version: str
) -> None:
    ref = ClaimRef(Namespace("team-a"), ClaimName("left"), ClaimUID("uid-left"))
    face, request = prepare_call(plugin, version, ref)
    call = GoneAfterStart()

    response = face.NodePrepareResources(request, call)

    assert call.asked >= 2
    assert "gave up on this call" in response.claims[ref.uid].error
    assert plugin.checkpoints.load().claims == {}
