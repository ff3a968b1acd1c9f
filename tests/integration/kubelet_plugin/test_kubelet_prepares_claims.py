"""The kubelet's view over real unix sockets: discover, register, prepare, unprepare."""

from __future__ import annotations

import json
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from plugin_node import DRIVER, NODE, Node, plugin_settings, start_node

from npu_dra.adapters.cdi.codec import decode
from npu_dra.adapters.checkpoint import FileCheckpointStore
from npu_dra.domain.ids import DeviceName
from tests.support.kubelet import get_info, registration_sockets


def test_kubelet_finds_one_registration_socket_named_after_the_driver(node: Node) -> None:
    found = registration_sockets(node.settings.registrar_dir)

    assert found == [node.registration_socket]
    assert stat.S_ISSOCK(found[0].stat().st_mode)


def test_get_info_announces_a_dra_plugin_with_v1_preferred(node: Node) -> None:
    info = get_info(node.registration_socket)

    assert info.type == "DRAPlugin"
    assert info.name == DRIVER
    assert info.endpoint == str(node.dra_socket)
    assert list(info.supported_versions) == [
        "v1.DRAPlugin",
        "v1beta1.DRAPlugin",
        "v1.DRAResourceHealth",
        "v1alpha1.DRAResourceHealth",
    ]


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_prepare_answers_devices_and_writes_a_cdi_spec_naming_the_chips(
    node: Node, version: str
) -> None:
    ref = node.claim("train", ["npu-2", "npu-5"])

    with node.kubelet.register(version) as dra:
        answer = dra.prepare([ref]).claims[ref.uid]

    assert answer.error == ""
    assert [(d.pool_name, d.device_name) for d in answer.devices] == [
        (NODE, "npu-2"),
        (NODE, "npu-5"),
    ]
    assert [list(d.request_names) for d in answer.devices] == [["npu"], ["npu"]]
    spec = decode(json.loads(node.cdi_spec(ref).read_text()))
    assert set(spec.device_nodes()) >= {"/dev/davinci2", "/dev/davinci5"}
    assert "/dev/davinci0" not in spec.device_nodes()
    qualified = {spec.qualified_name(d) for d in spec.devices}
    assert {i for d in answer.devices for i in d.cdi_device_ids} == qualified


def test_the_kubelet_uses_v1_when_it_picks_the_first_offered_version(node: Node) -> None:
    with node.kubelet.register() as dra:
        assert dra.version == "v1"


def test_subrequest_names_are_stripped_and_v1_carries_the_share_id(scratch: Path) -> None:
    """A share of npu-1, which --shared-chips names (a share of a chip it does not name is a
    crafted allocation, refused: tests/faults/test_shared_chips_together.py)."""
    node = start_node(plugin_settings(scratch, shared_chips=frozenset({DeviceName("npu-1")})))
    share = "0b7f1a52-3d4e-4f6a-8b9c-0d1e2f3a4b5c"
    ref = node.claim("shared", ["npu-1"], request="npu/big", share_id=share)

    try:
        with node.kubelet.register("v1") as dra:
            answer = dra.prepare([ref]).claims[ref.uid]
    finally:
        node.plugin.stop()
    assert answer.error == ""
    (device,) = answer.devices

    assert list(device.request_names) == ["npu"]
    assert device.HasField("share_id")
    assert device.share_id == share


def test_v1_leaves_share_id_unset_for_an_exclusive_device(node: Node) -> None:
    ref = node.claim("solo", ["npu-1"])

    with node.kubelet.register("v1") as dra:
        (device,) = dra.prepare([ref]).claims[ref.uid].devices

    assert not device.HasField("share_id")


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_prepare_twice_gives_the_same_answer_and_one_checkpoint_entry(
    node: Node, version: str
) -> None:
    ref = node.claim("again", ["npu-0"])

    with node.kubelet.register(version) as dra:
        first = dra.prepare([ref])
        second = dra.prepare([ref])

    assert first == second
    assert list(FileCheckpointStore(node.checkpoint_file).load().claims) == [ref.uid]


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_unprepare_works_from_the_checkpoint_after_the_claim_is_deleted(
    node: Node, version: str
) -> None:
    ref = node.claim("gone", ["npu-4"])
    with node.kubelet.register(version) as dra:
        dra.prepare([ref])
        node.cluster.delete("ResourceClaim", ref.name, ref.namespace)

        answer = dra.unprepare([ref])

    assert answer.claims[ref.uid].error == ""
    assert not node.cdi_spec(ref).exists()
    assert FileCheckpointStore(node.checkpoint_file).load().claims == {}


def test_unprepare_of_a_claim_never_prepared_succeeds(node: Node) -> None:
    ref = node.claim("never", ["npu-4"])

    with node.kubelet.register() as dra:
        assert dra.unprepare([ref]).claims[ref.uid].error == ""


def test_a_freed_device_can_be_prepared_for_the_next_claim(node: Node) -> None:
    first, second = node.claim("first", ["npu-3"]), node.claim("second", ["npu-3"])

    with node.kubelet.register() as dra:
        dra.prepare([first])
        blocked = dra.prepare([second]).claims[second.uid].error
        dra.unprepare([first])
        after = dra.prepare([second]).claims[second.uid]

    assert "already prepared" in blocked
    assert after.error == ""
    assert [d.device_name for d in after.devices] == ["npu-3"]


def test_many_concurrent_prepares_on_different_devices_all_succeed(node: Node) -> None:
    refs = [node.claim(f"job-{i}", [f"npu-{i}"]) for i in range(7)]
    with node.kubelet.register() as dra, ThreadPoolExecutor(len(refs)) as pool:
        answers = list(pool.map(lambda r: dra.prepare([r]).claims[r.uid], refs * 3))

    assert [a.error for a in answers] == [""] * len(answers)
    held = FileCheckpointStore(node.checkpoint_file).load().claims
    devices = [d.device for c in held.values() for d in c.devices]
    assert sorted(devices) == [f"npu-{i}" for i in range(7)]


def test_concurrent_prepares_racing_for_one_device_prepare_it_once(node: Node) -> None:
    refs = [node.claim(f"race-{i}", ["npu-6"]) for i in range(6)]
    with node.kubelet.register() as dra, ThreadPoolExecutor(len(refs)) as pool:
        answers = list(pool.map(lambda r: dra.prepare([r]).claims[r.uid], refs))

    winners = [a for a in answers if not a.error]
    assert len(winners) == 1
    assert sorted(p.name for p in node.settings.cdi_root.iterdir()) == [
        node.cdi_spec(refs[answers.index(winners[0])]).name
    ]


def test_one_call_with_several_claims_answers_each_in_its_slot(node: Node) -> None:
    good = node.claim("good", ["npu-0"])
    bad = node.claim("bad", ["npu-99"])

    with node.kubelet.register() as dra:
        claims = dra.prepare([good, bad]).claims

    assert set(claims) == {good.uid, bad.uid}
    assert claims[good.uid].error == ""
    assert "npu-99" in claims[bad.uid].error
    assert not node.cdi_spec(bad).exists()
