"""Hostile calls on the plugin process's DRA socket: names and UIDs that are not names, a known
UID under another identity, calls of thousands of claims, and floods of health streams. Every
answer comes in time, per claim, and changes nothing it should not."""

from __future__ import annotations

import grpc

from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2, api_pb2_grpc
from tests.faults.harness import create_claims, fault_node
from tests.support.controlplane import ControlPlane
from tests.support.kubelet import WireClaim

FLOOD = 32


def test_hostile_names_uids_and_sizes_get_per_claim_errors(access: ControlPlane) -> None:
    with fault_node(access, "hostile") as node:
        (owner,) = create_claims(node, [["npu-5"]])
        node.start()
        hostile = [
            WireClaim(node.namespace, "../../etc/passwd", "9d0e3c1a-0000-4000-8000-000000000001"),
            WireClaim(node.namespace, "x" * 300, "9d0e3c1a-0000-4000-8000-000000000002"),
            WireClaim(node.namespace, "fine", "../../../var/run/cdi/evil"),
            WireClaim("Not_A_Namespace", "fine", "9d0e3c1a-0000-4000-8000-000000000003"),
            WireClaim(node.namespace, "fine", "u" * 5000),
        ]
        many = [WireClaim(node.namespace, f"c-{i}", f"bad/uid/{i}") for i in range(5000)]
        with node.kubelet() as kubelet:
            granted = kubelet.prepare([owner], timeout=30).claims[owner.uid]
            answers = kubelet.prepare(hostile, timeout=30).claims
            bulk = kubelet.prepare(many, timeout=30).claims
            impostor = WireClaim(node.namespace, "impostor", owner.uid)
            stolen = kubelet.prepare([impostor], timeout=30).claims[owner.uid]
            removed = kubelet.unprepare([impostor], timeout=30).claims[owner.uid]
            again = kubelet.prepare([owner], timeout=30).claims[owner.uid]
        specs = node.spec_uids()

    assert [d.device_name for d in granted.devices] == ["npu-5"]
    assert set(answers) == {c.uid[:5000] for c in hostile}
    assert all(a.error for a in answers.values())
    assert all(len(a.error) < 400 for a in answers.values())
    assert len(bulk) == len(many)
    assert all("invalid claim reference" in a.error for a in bulk.values())
    assert stolen.devices == []
    assert f"is prepared for {node.namespace}/claim-0" in stolen.error
    assert f"is prepared for {node.namespace}/claim-0" in removed.error
    assert again == granted
    assert specs == {owner.uid}


def test_a_flood_of_health_streams_never_starves_prepare(access: ControlPlane) -> None:
    with fault_node(access, "flood") as node:
        (claim,) = create_claims(node, [["npu-6"]])
        node.start()
        with node.kubelet() as kubelet:
            socket = kubelet.endpoint
            channels = [grpc.insecure_channel(f"unix:{socket}") for _ in range(FLOOD)]
            streams = [
                api_pb2_grpc.DRAResourceHealthStub(c).NodeWatchResources(
                    api_pb2.NodeWatchResourcesRequest(), timeout=120
                )
                for c in channels
            ]
            try:
                answer = kubelet.prepare([claim], timeout=30).claims[claim.uid]
                gone = kubelet.unprepare([claim], timeout=30).claims[claim.uid]
            finally:
                for stream, channel in zip(streams, channels, strict=True):
                    stream.cancel()
                    channel.close()

    assert [d.device_name for d in answer.devices] == ["npu-6"]
    assert gone.error == ""
